#!/usr/bin/env bash
# `make deb`: builds OUTDIR/batchrun_VERSION_ARCH.deb with dpkg-deb from the release binary:
# the files packaging/stage.sh installs under /usr, the systemd units and their system user,
# the docs, and the package's metadata. VERSION is the binary's own (`batchrun --version`, from
# git describe); Depends comes from the libraries the binary links (dpkg-shlibdeps).
#
#   packaging/build-deb.sh BINARY GENERATE_MANUAL OUTDIR
set -euo pipefail
binary=$1 generate_manual=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

version=$("$binary" --version | sed -n '1s/^batchrun //p')
# The maintainer: DEB_MAINTAINER, or the author of the commit it is built from.
maintainer=${DEB_MAINTAINER:-$(git -C "$repo" log -1 --format='%an <%ae>')}
commit=$("$binary" --version | sed -n 's/^commit //p')
# A package's version must sort after the one it upgrades: it needs the commit and git's history.
[ "$commit" != unknown ] || { echo "build-deb: $binary does not know its commit (built outside a git checkout?)" >&2; exit 1; }
[ "$(git -C "$repo" rev-parse --is-shallow-repository)" = false ] \
    || { echo "build-deb: a shallow clone has no history to number the version by; fetch it (git fetch --unshallow)" >&2; exit 1; }
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"

"$here/stage.sh" "$binary" "$generate_manual" "$root" /usr

install -d "$root/lib/systemd/system" "$root/usr/lib/sysusers.d"
install -m 644 "$here"/systemd/*.service "$here"/systemd/*.timer "$root/lib/systemd/system/"
install -m 644 "$here/debian/sysusers.conf" "$root/usr/lib/sysusers.d/batchrun.conf"

doc="$root/usr/share/doc/batchrun"
install -d "$doc/examples"
install -m 644 "$here/debian/copyright" "$doc/copyright"
install -m 644 "$repo/README.md" "$repo"/docs/*.md "$doc/"
install -m 644 "$here"/examples/*.env "$doc/examples/"
install -d "$root/usr/share/lintian/overrides"
install -m 644 "$here/debian/lintian-overrides" "$root/usr/share/lintian/overrides/batchrun"
# A native package's changelog: this build's entry (the history is git's).
date=$(git -C "$repo" log -1 --format=%aD 2>/dev/null || date -R)
printf 'batchrun (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n  * The changes are in git log.\n\n -- %s  %s\n' \
    "$version" "${commit:0:12}" "$maintainer" "$date" | gzip -9n > "$doc/changelog.gz"
chmod 644 "$doc/changelog.gz"

# Depends: what the binary links, at the versions its symbols need.
install -d "$work/shlibs/debian"
printf 'Source: batchrun\n\nPackage: batchrun\nArchitecture: any\n' > "$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$root/usr/bin/batchrun" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "dpkg-shlibdeps found no dependencies" >&2; exit 1; }

install -d "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" -e "s|@MAINTAINER@|$maintainer|" \
    "$here/debian/control.in" > "$root/DEBIAN/control"
install -m 755 "$here/debian/postinst" "$here/debian/prerm" "$here/debian/postrm" "$root/DEBIAN/"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | xargs md5sum) > "$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/md5sums"

mkdir -p "$out"
package="$out/batchrun_${version}_${arch}.deb"
rm -f "$out"/batchrun_*.deb
SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s) \
    dpkg-deb --root-owner-group -Zxz -z9 --build "$root" "$package" >/dev/null
echo "$package: $(du -h "$package" | cut -f1), installs $((size / 1024)) MB; Depends: $depends"
