"""Pure parsers: raw text in, typed frozen facts out; they never raise on bad input."""
