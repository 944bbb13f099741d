"""quadsel: quadtree-encoded MPI collective algorithm selection (Pješivac-Grbović et al., 2007)."""

__version__ = "0.1.0"
