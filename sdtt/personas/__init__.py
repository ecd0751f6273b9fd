"""Personas: the persona model and store, chat-export importers, PII scrubbing, timing
profiles, the persona bot and its prompts."""
