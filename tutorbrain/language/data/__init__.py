"""Per-language cue data. One module per language; adding a language adds a module.

Each module defines DATA with the same keys (see tutorbrain/language/__init__.py for
what each key is used for). Month names, relative dates and stop words are NOT typed
here: they come from CLDR (Babel) and the stop-words package.
"""

LANGUAGE_CODES = ("en", "es", "pt", "fr", "ar")
