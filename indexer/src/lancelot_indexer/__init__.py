"""lancelot-index: build the LanceDB table that Lancelot's server reads. The only code that writes."""

__version__ = "0.1.0"
