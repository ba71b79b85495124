"""Rendered env frames: taken from the one env per path that is shown (`hub`), drawn as terminal cells
(`cells`), sent to attached viewers (`wire`) and written as clips (`clip`, `record`). No Textual here."""
