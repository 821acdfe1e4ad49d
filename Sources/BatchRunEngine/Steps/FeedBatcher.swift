@_spi(BatchRunPackage) import BatchRunStore
import BatchRunFeeds
import Foundation

/// The reading side of an insert: turns a feed (a CSV or TSV file, JSON, NDJSON or inline rows)
/// into row batches of typed cells, one layout per set of fields, rejecting or failing on bad
/// rows as `bad_rows` says.
struct FeedBatcher {
    /// Where a set of feed fields goes: the columns written and which field feeds each.
    /// A class, shared by every row of its layout (copying its arrays per row showed in profiles).
    package final class Layout: Sendable {
        package let columns: [Column]
        package let fields: [Int]
        let converters: [CellConverter]

        package init(columns: [Column], fields: [Int], converters: [CellConverter]) {
            self.columns = columns
            self.fields = fields
            self.converters = converters
        }
    }

    package let step: InsertStep
    package let entity: Entity
    let feedName: String
    package let nulls: NullMarkers
    package private(set) var layouts: [Layout] = []
    private var layoutIndex: [[String]: Int] = [:]
    private var source: Source
    /// A CSV or TSV file's reader, kept out of `source` so each row is read in place (taking
    /// it out of the enum and back copied it, with its buffers' reference counts, per row).
    private var csv: CSVReader?
    private var rejected: RejectedRows?
    private(set) var rejectedCount = 0
    private var raw = RawRow()
    /// Inline rows read so far (rejected ones included).
    private var inlineRead = 0
    /// A remote feed's identity, from its first request or the checkpoint resumed from: each
    /// checkpoint records it, every request must find the same object.
    private var remoteIdentity: RemoteIdentity?
    /// Takes a local feed file's fingerprint after each batch.
    private var fingerprinter: FeedFingerprinter?

    private enum Source {
        case csv
        case records(any FeedReader)
        case inline(IndexingIterator<[FeedRecord]>)
    }

    /// `resumeAt`: the checkpoint of an interrupted import; reading goes on after it (inline
    /// rows after the rows done, a file from the offset saved, appending to the rejected rows).
    /// `watch`: asked after each chunk the feed's reader reads (a cancel, the item's limits).
    package init(step: InsertStep, entity: Entity, feedName: String, resumeAt: StepPosition? = nil, watch: FeedWatch? = nil) throws {
        self.step = step
        self.entity = entity
        self.feedName = feedName
        switch step.source {
        case .rows(let rows):
            nulls = NullMarkers(step.nulls ?? [])
            var done = 0
            if case .rows(let count)? = resumeAt { done = min(count, rows.count) }
            inlineRead = done
            source = .inline(rows.enumerated().dropFirst(done).map { index, row in
                FeedRecord(line: index + 1, fields: row.map(\.field), values: row.map(\.value))
            }.makeIterator())
        case .parts:
            // `InsertRunner` reads a feed in parts one part at a time (`InsertStep.reading(part:)`).
            throw FeedFailure(message: "\(feedName): a feed in parts is read one part at a time")
        case .file(let path, let format):
            nulls = NullMarkers(step.nulls ?? (format == .csv || format == .tsv ? [""] : []))
            var start: FeedOffset?
            if case .feed(let position)? = resumeAt {
                start = FeedOffset(offset: position.offset, line: position.line)
                remoteIdentity = position.remote
                if step.badRows == .skip { rejected = try RejectedRows(feedPath: step.remote?.rejectedBase ?? path,
                                                                       resumingAt: position.rejectedBytes, confinement: step.confinement) }
            }
            if step.remote == nil {
                fingerprinter = FeedFingerprinter(path: path, compressed: step.compression != .none, confinement: step.confinement)
            }
            var remote = step.remote
            if let feed = remote {
                // A part of a listing is expected as listed (`InsertStep.reading(part:)`).
                if remoteIdentity == nil { remoteIdentity = try feed.expected ?? RemoteFeeds.identity(of: feed, displayPath: feedName, watch: watch) }
                remote?.expected = remoteIdentity
            }
            switch format {
            case .csv, .tsv:
                let reader = try CSVReader(path: path, delimiter: UInt8(ascii: format == .csv ? "," : "\t"), displayPath: feedName,
                                           startingAt: start, compression: step.compression, confinement: step.confinement,
                                           remote: remote, watch: watch)
                source = .csv
                csv = reader
                _ = try layout(for: reader.header, line: 1)
            case .json, .ndjson:
                source = .records(try FeedReaders.open(path: path, format: format, displayPath: feedName, startingAt: start,
                                                       compression: step.compression, confinement: step.confinement,
                                                       remote: remote, watch: watch))
            }
        }
    }

    /// Where the next record starts, as a checkpoint after the rows read so far saves it (a
    /// file's position with its fingerprint; inline rows by count).
    package var position: StepPosition? {
        switch source {
        case .inline: return .rows(inlineRead)
        case .csv: return csv.flatMap { filePosition($0.nextRecord) }
        case .records(let reader): return filePosition(reader.nextRecord)
        }
    }

    private func filePosition(_ next: FeedOffset) -> StepPosition? {
        guard case .file = step.source else { return nil }
        if let remoteIdentity {
            return .feed(FeedPosition(offset: next.offset, line: next.line, rejectedBytes: rejected?.bytes ?? 0,
                                      feedSize: remoteIdentity.length ?? -1, feedModified: 0, headHash: 0, tailHash: 0,
                                      remote: remoteIdentity))
        }
        return fingerprinter?.position(at: next, rejectedBytes: rejected?.bytes ?? 0) { count in
            switch source {
            case .csv: csv?.hashOfBytes(beforeNextRecord: count)
            case .records(let reader): reader.hashOfBytes(beforeNextRecord: count)
            case .inline: nil
            }
        }.map(StepPosition.feed)
    }

    /// Where a record is, for messages: `data/sessions.csv:1234`, or `inline row 2`.
    package func place(_ line: Int) -> String {
        FeedPlace(feedName: feedName, inline: step.isInline)(line)
    }

    /// Fills `batch` with up to `limit` rows; false when the feed is done.
    package mutating func fill(_ batch: inout RowBatch, limit: Int) throws -> Bool {
        while batch.count < limit {
            switch source {
            case .csv:
                return try fillFromCSV(&batch, limit: limit)
            case .records(var reader):
                let record = try reader.next()
                source = .records(reader)
                guard let record else { return false }
                try convert(record, into: &batch)
            case .inline(var iterator):
                let record = iterator.next()
                source = .inline(iterator)
                guard let record else { return false }
                inlineRead += 1
                try convert(record, into: &batch)
            }
        }
        return true
    }

    /// A CSV or TSV feed's rows into `batch`: its one layout, its fields and converters and the
    /// NULL spellings taken once a batch rather than once a row (their reference counting, per
    /// row, was a tenth of the reader's time in profiles).
    private mutating func fillFromCSV(_ batch: inout RowBatch, limit: Int) throws -> Bool {
        let layout = layouts[0], fields = layout.fields, converters = layout.converters, nulls = nulls
        while batch.count < limit {
            guard try csv!.nextRow(into: &raw) else { return false }
            batch.beginRow(line: raw.line, layout: 0)
            if let (position, problem) = CellConverter.append(raw, fields: fields, converters: converters, nulls: nulls, to: &batch) {
                batch.dropLastRow()
                try reject(line: raw.line, fields: layoutFields(0), values: (0..<raw.count).map { raw.string($0) },
                           reason: "column \(layout.columns[position].name): \(problem)")
            }
        }
        return true
    }

    private mutating func convert(_ record: FeedRecord, into batch: inout RowBatch) throws {
        let index = try layout(for: record.fields, line: record.line)
        let layout = layouts[index]
        batch.beginRow(line: record.line, layout: index)
        for (position, field) in layout.fields.enumerated() {
            if let problem = layout.converters[position].append(record.values[field], nulls: nulls, to: &batch) {
                batch.dropLastRow()
                try reject(line: record.line, fields: record.fields, values: record.values.map(\.description),
                           reason: "column \(layout.columns[position].name): \(problem)")
                return
            }
        }
    }

    private func layoutFields(_ index: Int) -> [String] {
        if let csv { return csv.header }
        return layoutIndex.first { $0.value == index }?.key ?? []
    }

    /// The layout for a set of fields, made once; fields that match no column are an error.
    private mutating func layout(for fields: [String], line: Int) throws -> Int {
        if let known = layoutIndex[fields] { return known }
        var columns: [Column] = [], fieldIndexes: [Int] = [], converters: [CellConverter] = []
        var unknown: [String] = []
        for (index, field) in fields.enumerated() {
            guard let target = step.column(forField: field), let name = target else { continue }   // dropped by `columns`
            guard let column = entity.column(named: name) else {
                unknown.append(field)
                continue
            }
            columns.append(column)
            fieldIndexes.append(index)
            converters.append(CellConverter(column: column, isRowidKey: entity.hasRowidKey && entity.primaryKey == [column.name]))
        }
        if !unknown.isEmpty {
            throw FeedFailure(message: "\(place(line)): field\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")) match"
                + "\(unknown.count == 1 ? "es" : "") no column of \(entity.name) (columns: \(entity.columnNames.joined(separator: ", "))); "
                + "map them with columns: { FIELD: COLUMN } or drop them with columns: { FIELD: null }")
        }
        layouts.append(Layout(columns: columns, fields: fieldIndexes, converters: converters))
        layoutIndex[fields] = layouts.count - 1
        return layouts.count - 1
    }

    /// Under `bad_rows: skip` the row goes to `FEED.rejected.csv`; otherwise the feed fails here.
    private mutating func reject(line: Int, fields: [String], values: [String], reason: String) throws {
        guard step.badRows == .skip, case .file(let path, _) = step.source else {
            throw FeedFailure(message: "\(place(line)): \(reason)")
        }
        if rejected == nil { rejected = try RejectedRows(feedPath: step.remote?.rejectedBase ?? path, confinement: step.confinement) }
        try rejected?.append(line: line, fields: fields, values: values, reason: reason)
        rejectedCount += 1
    }

    /// The feed was read to its end: the rejected file is put in place (or a stale one removed).
    package func finish() throws {
        if let rejected {
            try rejected.finish()
        } else if step.badRows == .skip, case .file(let path, _) = step.source {
            RejectedRows.removeStale(forFeed: step.remote?.rejectedBase ?? path, confinement: step.confinement)
        }
    }

    package func abandon() {
        rejected?.abandon()
    }
}

/// A bad row or a malformed feed: the message names the file and line.
struct FeedFailure: Error {
    package var message: String
}
