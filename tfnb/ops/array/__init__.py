"""Array ops, one family a module; tfnb/ops/array_ops.py gathers their public names under TF's module name."""
