"""Op families: for each op type its constructor, its registry row (shape rule, examples) and its gradient."""
