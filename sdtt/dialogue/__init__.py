"""Messages, transcripts and their condition, turns, the seed rule, rendering and parsing
of prompt lines, the JSONL store (pure: no I/O beyond reading and writing files)."""
