"""Entry point of the glance jail launcher, run by path: `python -I -S run.py ... --b64 COMMAND`.

`-I -S` keep the user's environment, the working directory and site-packages out of the launcher; it
needs only the standard library, so the directory of this file is put on `sys.path` and `_kernel`
imported from there as a top-level package (flower itself, and its dependencies, are never imported).
Importing this module does nothing: only running it as a script starts the launcher.
"""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

    # `__import__`, not `importlib`: importing that costs the launcher half a millisecond at every glance
    code = __import__("_kernel.launch", fromlist=["main"]).main(sys.argv[1:])
    os._exit(code)  # not sys.exit: interpreter shutdown costs ~3 ms, and every output went out by os.write
