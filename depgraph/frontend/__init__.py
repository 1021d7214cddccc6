"""The frontend: from a recurrence file and its cell function to what depgraph knows of
them.

- :mod:`depgraph.frontend.loader`: load a recurrence file, pick a recurrence;
- :mod:`depgraph.frontend.trace`: run the cell function in plain Python, recording its
  reads (the ground truth, and the sequential reference);
- :mod:`depgraph.frontend.source` and :mod:`depgraph.frontend.ir`: read the cell
  function's source once into the cell IR;
- :mod:`depgraph.frontend.narrow`: prove that an integer cell's arithmetic fits in
  32 bits.
"""
