"""Cycles in a directed graph, for check_layout.py.

A graph is a dict from each node to the set of nodes it has edges to. Nodes are
strings (file or module names), so every answer comes out in a stable order.
"""


def strongly_connected(graph):
    """The graph's strongly connected components of more than one node (Tarjan)."""
    nodes = sorted(set(graph) | {v for targets in graph.values() for v in targets})
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def visit(start):
        # Iterative depth-first search: (node, iterator over its successors).
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))

    for node in nodes:
        if node not in index:
            visit(node)
    return sorted(components)


def _shortest_path(graph, start, goal, allowed):
    """The shortest path start .. goal through `allowed` nodes (breadth first)."""
    previous = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(graph.get(node, ())):
                if succ in allowed and succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        if goal in previous:
            break
        frontier = following
    path, node = [], goal
    while node is not None:
        path.append(node)
        node = previous[node]
    return path[::-1]


def cycles(graph):
    """Each distinct shortest cycle through an edge that lies on a cycle, as a
    list of nodes whose last is its first (a -> b -> a), smallest node first."""
    found = set()
    for component in strongly_connected(graph):
        members = set(component)
        for node in component:
            for succ in sorted(graph.get(node, ())):
                if succ in members:
                    loop = [node] + _shortest_path(graph, succ, node, members)[:-1]
                    turn = loop.index(min(loop))
                    found.add(tuple(loop[turn:] + loop[:turn]))
    return [list(loop) + [loop[0]] for loop in sorted(found)]
