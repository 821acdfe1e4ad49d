import Foundation

/// A queue folder's entries read as `readdir` gives them, one at a time: nothing is made per
/// entry but what the caller keeps, so a folder of 10,000 items costs no array of names.
///
/// ```swift
/// let pending = FolderEntries.itemCount(in: "var/queue/pending")
/// ```
package enum FolderEntries {
    /// An item's name (`NAME.yaml`, `NAME.yml`, not starting with `.`), as `QueueFolder.isItem`.
    static func isItem(_ name: UnsafeRawBufferPointer) -> Bool {
        guard let first = name.first, first != UInt8(ascii: ".") else { return false }
        return (name.count > 5 && name.suffix(5).elementsEqual(".yaml".utf8)) || (name.count > 4 && name.suffix(4).elementsEqual(".yml".utf8))
    }

    /// How many items `folder` holds (0 when it cannot be read).
    package static func itemCount(in folder: String) -> Int {
        guard let directory = opendir(folder) else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if withUnsafeBytes(of: entry.pointee.d_name, { raw in
                isItem(UnsafeRawBufferPointer(rebasing: raw[..<(raw.firstIndex(of: 0) ?? raw.count)]))
            }) { count += 1 }
        }
        return count
    }
}
