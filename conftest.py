"""Test-wide settings.

CUDA kernels run under numba's CUDA simulator unless ``DEPGRAPH_GPU=1`` asks for the real
GPU (then ``pytest -m gpu`` also runs the real-size GPU tests).  The variable must be set
before numba.cuda is first imported, hence in the root conftest.
"""

import os

if os.environ.get("DEPGRAPH_GPU") != "1":
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
