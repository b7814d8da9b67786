//! F.I.L.O solver (filled below).
