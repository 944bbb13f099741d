"""Decision: the decision map (§3), its padding, the quadtree builders (§3.1) and the decision function with its query rule and tree file."""
