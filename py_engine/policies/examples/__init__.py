"""Reference policies written on the public hooks, each a file that runs unchanged as a reader's
own code (`{"scheduler": "custom", "custom": {"code": <the file>}}`, or `python -m py_engine run
--policy-file py_engine/policies/examples/<name>.py`): start from one. They register nothing:
the built-in schedulers are the modules one level up."""
