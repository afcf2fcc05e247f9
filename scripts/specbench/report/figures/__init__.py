"""The report's figures as PNG bytes, pure (tables in, bytes out), with their shared style."""
