"""One reader a format, chosen by suffix in `formats.FORMATS`: a new format is one module and one line there."""
