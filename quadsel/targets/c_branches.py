"""§3.2 and its future work: the decision function as if/else-if C, merged (default) or in the paper's form.

Merged: every quadtree node becomes binary tests of one comparison each (`comm_size < 8`,
`msg_size < (size_t)4096`) in a small decision IR, built bottom-up and hash-consed so equal subtrees are one
object. A test whose two branches are the same code cannot change the outcome and is dropped (this merges
siblings and whole subtrees that return the same method); a test whose branch re-tests the same axis with
the other branch's code on one side is folded into one test; of the two orders a four-way node can test its
cuts in (communicator first, or message first), the one with fewer tests is kept. Printed, each test is
one `if`, a test in an else branch chains as `else if`, and every chain ends with a plain `else`.

Order (`--order`): "expected" (the default) prints, where it expects fewer tests per random query, the same
answers re-derived from the tree's regions in the order with the fewest expected tests (c_order.py); "tree"
prints the merged quadtree in its own order (root cut first).

Unmerged (`--no-merge`): the paper's form, `if (NW) {…} else if (NE) {…} else if (SW) {…} else if (SE) {…}`
for every internal node, each condition restating both cuts, every leaf emitted.

Function size (the paper's Table 3 column) = the number of `if` and `else if` statements.
"""

from dataclasses import dataclass

from .c_order import COMM, MSG, expected_ir, expected_tests, query_shares
from .escape import comment_text

ORDERS = ("expected", "tree")


@dataclass(frozen=True)
class FunctionSize:
    tests: int            # `if` / `else if` statements (the paper's "function size")
    assignments: int      # leaf assignments `alg = …; seg = …;` (the deployed size)


class DecisionIR:
    """Binary decision nodes over the grid's cuts, hash-consed: node id -> ("leaf", method) or (axis, cell, lo, hi).

    A test (axis, cell, lo, hi) sends sizes below the cell's lower bound to `lo` (north / west), the others to
    `hi`. Equal code has equal ids, so "both branches are the same" is an integer comparison.
    """

    def __init__(self):
        self.nodes, self._ids, self._sizes = [], {}, []

    def _intern(self, key):
        if key not in self._ids:
            self._ids[key] = len(self.nodes)
            self.nodes.append(key)
            lo, hi = (key[2], key[3]) if key[0] != "leaf" else (None, None)
            self._sizes.append(0 if lo is None else 1 + self._sizes[lo] + self._sizes[hi])
        return self._ids[key]

    def leaf(self, method):
        return self._intern(("leaf", int(method)))

    def tests(self, node):
        """Tests the node takes when printed as code (shared subtrees are printed once per use)."""
        return self._sizes[node]

    def is_test_on(self, node, axis):
        return self.nodes[node][0] == axis

    def test(self, axis, cell, lo, hi):
        """The node `size(axis) < lo[cell] ? lo : hi`, simplified."""
        if lo == hi:                                   # the test cannot change the outcome
            return lo
        if self.is_test_on(lo, axis):                  # size < cut ? (size < c2 ? x : y) : hi, with y == hi
            _, c2, x, y = self.nodes[lo]
            if y == hi and c2 < cell:
                return self.test(axis, c2, x, hi)
        if self.is_test_on(hi, axis):                  # size < cut ? lo : (size < c2 ? x : y), with x == lo
            _, c2, x, y = self.nodes[hi]
            if x == lo and c2 > cell:
                return self.test(axis, c2, lo, y)
        return self._intern((axis, int(cell), lo, hi))


def merged_ir(tree):
    """(DecisionIR, root id) of a Quadtree: bottom-up, each four-way node in its cheaper test order."""
    ir, ids = DecisionIR(), [None] * tree.n_nodes
    children, comm_cut, msg_cut, method = (tree.children.tolist(), tree.comm_cut.tolist(), tree.msg_cut.tolist(),
                                           tree.method.tolist())        # Python ints: one conversion, not one per node
    for node in range(tree.n_nodes - 1, -1, -1):      # children come after their parent
        nw, ne, sw, se = children[node]
        cc, mc = comm_cut[node], msg_cut[node]
        if nw < 0:
            ids[node] = ir.leaf(method[node])
        elif mc < 0:
            ids[node] = ir.test(COMM, cc, ids[nw], ids[sw])
        elif cc < 0:
            ids[node] = ir.test(MSG, mc, ids[nw], ids[ne])
        else:
            comm_first = ir.test(COMM, cc, ir.test(MSG, mc, ids[nw], ids[ne]), ir.test(MSG, mc, ids[sw], ids[se]))
            msg_first = ir.test(MSG, mc, ir.test(COMM, cc, ids[nw], ids[sw]), ir.test(COMM, cc, ids[ne], ids[se]))
            ids[node] = msg_first if ir.tests(msg_first) < ir.tests(comm_first) else comm_first
    return ir, ids[0]


def ordered_ir(fn, order="expected"):
    """(DecisionIR, root, root in the tree's order) of the merged if/else-if: the quadtree's order ("tree"), or the
    order with the fewest expected tests on random queries (c_order.py) where its search runs and it expects
    fewer than the tree's."""
    import sys
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}")
    ir, root = merged_ir(fn.tree)
    if order == "tree":
        return ir, root, root
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * int(fn.tree.depth.max()) + sum(fn.cell_methods().shape) + 1000))
    try:                                   # the search recurses by depth and by bands + columns
        found = expected_ir(fn, ir, root)
    finally:
        sys.setrecursionlimit(limit)
    shares = query_shares(fn)
    if expected_tests(fn, ir, found, shares=shares) > expected_tests(fn, ir, root, shares=shares):
        return ir, root, root
    return ir, found, root


def walked_tests(fn, order="expected", ordered=None):
    """Expected tests per random query (c_order.cell_weights' prior) of the merged C in `order` and in the tree's
    (`ordered`: ordered_ir's result, when the caller has it)."""
    ir, root, tree_root = ordered or ordered_ir(fn, order)
    shares = query_shares(fn)
    return expected_tests(fn, ir, root, shares=shares), expected_tests(fn, ir, tree_root, shares=shares)


def function_size(fn, merge=True, order="expected", ordered=None):
    """Tests (if / else if statements) and leaf assignments of fn's generated if/else-if C."""
    tree = fn.tree
    if merge:
        ir, root, _ = ordered or ordered_ir(fn, order)
        tests = ir.tests(root)
        return FunctionSize(tests, tests + 1)
    inner = ~tree.is_leaf
    arity = (tree.children[inner] >= 0).sum(axis=1)
    return FunctionSize(int(arity.sum()), tree.n_leaves)


class _Printer:
    """C statements of a decision function body, one per line, indented for a function body."""

    def __init__(self, fn, ids):
        self.fn, self.ids, self.out = fn, ids, []
        self.bounds = (fn.comm_axis.lo, fn.msg_axis.lo)

    def condition(self, axis, cell, below=True):
        bound = int(self.bounds[axis][cell])
        op = "<" if below else ">="
        return f"comm_size {op} {bound}" if axis == COMM else f"msg_size {op} (size_t){bound}"

    def assign(self, method_index, indent):
        method = self.fn.methods[int(method_index)]
        from ..libraries import named_label      # the id's name beside it: "6" is another algorithm per collective
        label = named_label(self.fn.provenance.get("library"), self.fn.collective, method.label)
        self.out.append(f"{'    ' * indent}alg = {self.ids[method.algorithm][0]}; seg = {method.segsize}; "
                        f"/* {comment_text(label)} */")

    def merged(self, ir, node, indent):
        key = ir.nodes[node]
        if key[0] == "leaf":
            self.assign(key[1], indent)
            return
        pad = "    " * indent
        self.out.append(f"{pad}if ({self.condition(key[0], key[1])}) {{")
        while True:                                    # the else branch chains as `else if` while it is a test
            axis, cell, lo, hi = key
            self.merged(ir, lo, indent + 1)
            key = ir.nodes[hi]
            if key[0] == "leaf":
                self.out.append(f"{pad}}} else {{")
                self.assign(key[1], indent + 1)
                self.out.append(f"{pad}}}")
                return
            self.out.append(f"{pad}}} else if ({self.condition(key[0], key[1])}) {{")

    def paper(self, tree, node, indent):
        kids, cc, mc = tree.children[node], int(tree.comm_cut[node]), int(tree.msg_cut[node])
        if kids[0] < 0:
            self.assign(tree.method[node], indent)
            return
        pad, keyword = "    " * indent, "if"
        names = ("NW", "NE", "SW", "SE") if cc >= 0 and mc >= 0 else ("north", "", "south", "") if cc >= 0 \
            else ("west", "east", "", "")
        for slot, quadrant in enumerate(names):
            if kids[slot] < 0:
                continue
            south, east = slot >= 2, slot % 2 == 1
            parts = ([self.condition(COMM, cc, not south)] if cc >= 0 else []) + \
                    ([self.condition(MSG, mc, not east)] if mc >= 0 else [])
            self.out.append(f"{pad}{keyword} ({' && '.join(parts)}) {{ /* {quadrant} */")
            self.paper(tree, int(kids[slot]), indent + 1)
            keyword = "} else if"
        self.out.append(f"{pad}}}")


def emit_branches(fn, ids, merge=True, order="expected", ordered=None):
    """The if/else-if body of fn's decision function (assigning `alg` and `seg`), one statement per line."""
    import sys
    printer = _Printer(fn, ids)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * int(fn.tree.depth.max()) + 1000))   # the printers recurse by depth
    try:
        if merge:
            ir, root, _ = ordered or ordered_ir(fn, order)
            printer.merged(ir, root, 1)
        else:
            printer.paper(fn.tree, 0, 1)
    finally:
        sys.setrecursionlimit(limit)
    return "\n".join(printer.out)
