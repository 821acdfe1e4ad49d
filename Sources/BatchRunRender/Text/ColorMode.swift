/// When the text output is coloured: `auto` (a terminal without NO_COLOR), `always`, `never`.
package enum ColorMode: String, CaseIterable, Sendable {
    case auto, always, never
}
