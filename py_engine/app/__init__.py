"""What clients use: the schema and figures of the page, the worker protocol, the command line."""
