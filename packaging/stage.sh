#!/usr/bin/env bash
# Installs batchrun's files under DESTDIR/PREFIX: the binary stripped, a man page per command
# (made from the commands themselves by swift-argument-parser's generate-manual), and the
# completion scripts for bash, zsh and fish where each shell looks. `make install` and
# `make deb` both use it, so what is installed and what is packaged are the same files.
#
#   packaging/stage.sh BINARY GENERATE_MANUAL DESTDIR PREFIX
set -euo pipefail
binary=$1 generate_manual=$2 destdir=$3 prefix=$4
root="$destdir$prefix"

install -d "$root/bin"
install -s -m 755 "$binary" "$root/bin/batchrun"
strip --remove-section=.comment "$root/bin/batchrun"    # the compilers' version strings

# Man pages: batchrun(1) and batchrun-COMMAND(1), dated by the commit they were built from.
# generate-manual names a subcommand's page batchrun.COMMAND; man's convention is a hyphen.
# The help command and the worker's hidden runner get no page.
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
pages=$(mktemp -d)
trap 'rm -rf "$pages"' EXIT
"$generate_manual" "$binary" --multi-page --date "$date" --output-directory "$pages"
rm -f "$pages/batchrun.help.1" "$pages/batchrun.runner.1"
install -d "$root/share/man/man1"
for page in "$pages"/*.1; do
    name=$(basename "$page" .1)
    name=${name//./-}
    # whatis (man -k) needs one word in NAME: batchrun-worker there, `batchrun worker` in SYNOPSIS.
    sed -e 's/^\.Dt BATCHRUN\./.Dt BATCHRUN-/' \
        -e 's/^\.Nm "batchrun \([a-z]*\)"$/.Nm batchrun-\1/' \
        -e 's/^\.Nd "\(.*\)"$/.Nd \1/' \
        -e '/^\.Sh SYNOPSIS$/{n;s/^\.Nm$/.Nm "'"${name//-/ }"'"/;}' \
        -e '/^\.Xr batchrun\.\(help\|runner\) 1/d' \
        -e 's/^\.Xr batchrun\.\([a-z]*\) 1/.Xr batchrun-\1 1/' "$page" |
        gzip -9n > "$root/share/man/man1/$name.1.gz"
    chmod 644 "$root/share/man/man1/$name.1.gz"
done

# Completions, from the binary itself. zsh looks in vendor-completions for the system's
# packages and in site-functions for what is installed under /usr/local.
zsh=$([ "$prefix" = /usr ] && echo vendor-completions || echo site-functions)
install -d "$root/share/bash-completion/completions" "$root/share/zsh/$zsh" "$root/share/fish/vendor_completions.d"
# bash-completion sources its scripts: no #! line.
"$binary" --generate-completion-script bash | sed '1{/^#!/d}' > "$root/share/bash-completion/completions/batchrun"
"$binary" --generate-completion-script zsh > "$root/share/zsh/$zsh/_batchrun"
"$binary" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/batchrun.fish"
chmod 644 "$root/share/bash-completion/completions/batchrun" "$root/share/zsh/$zsh/_batchrun" \
    "$root/share/fish/vendor_completions.d/batchrun.fish"
