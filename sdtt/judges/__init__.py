"""Judges that decide which conversation of a pair is the AI: LLM judges and a classifier."""
