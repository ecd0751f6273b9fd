"""Local stand-ins for provider HTTP APIs, reusable by tests and benchmarks.

Each fake is a real HTTP server on 127.0.0.1 with a free port, started in a background
thread by ``with Fake...Server() as server:``; the official SDKs talk to it unchanged.
"""
