"""The compiled CPU training engine (numba): ``engine`` runs WLO's mega-batches through the
kernels of ``wlo_kernels`` (encoding, whole runs of steps) and ``mining_kernels`` (negatives);
each kernel is tested equal to the readable torch reference it speeds up."""
