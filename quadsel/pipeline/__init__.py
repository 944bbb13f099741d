"""The pipeline's steps as plain functions, the ones `quadsel` (cli/) and `quadsel tune` (tune/) both call: build and
score (build.py). Each takes typed values and raises QuadselError for a refusal; none parses a command line."""
