"""Redaction: the sanitizer, its secret and PII patterns, and the scanner.

Below the action log in the layers (everything that writes or prints text uses it); standard
library only, because the append path loads it on every `lore log`.

Core module: standard library only, see docs/architecture.md#core.
"""
