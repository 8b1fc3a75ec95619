"""Cut a sequence of sized items into consecutive segments whose sizes land in a band.

One dynamic programme serves both levels: units -> parent sections (sections.py) and atoms -> child
chunks (children.py). Callers say where they would rather cut through two cost lists; the programme
finds the cheapest segmentation exactly and deterministically (ties go to the earliest candidate).

Cost of a segmentation = sum over segments of
    size cost   ((size - target) / band width)^2, plus BELOW_MIN_BASE + BELOW_MIN_SLOPE * shortfall
                when below the minimum: landing in the band outweighs any preference about where to cut
  + cut cost    of the position where the segment starts (the caller's price for cutting there)
  + keep costs  of the positions inside it (the caller's price for *not* cutting there)
Segments above the maximum are never considered, unless indivisible: one item, or a glued chain
(an item that must not end a segment, like a heading) followed by one item. Because a segment never
exceeds the maximum, each position looks back over at most `maximum` tokens' worth of items:
O(n * w), not O(n^2), even for a document of ten thousand tiny sections.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BELOW_MIN_BASE = 10.0
BELOW_MIN_SLOPE = 10.0
_UNREACHABLE = float("inf")


@dataclass(frozen=True)
class Band:
    minimum: int
    target: int
    maximum: int

    def size_cost(self, size: int) -> float:
        clipped = min(max(size, self.minimum), self.maximum)
        deviation = (clipped - self.target) / max(1, self.maximum - self.minimum)
        cost = deviation * deviation
        if size < self.minimum:
            cost += BELOW_MIN_BASE + BELOW_MIN_SLOPE * (self.minimum - size) / self.minimum
        return cost


def plan_segments(
    sizes: Sequence[int],
    band: Band,
    cut_costs: Sequence[float],
    keep_costs: Sequence[float],
    glued: Sequence[bool],
    joiner_tokens: int = 1,
) -> list[tuple[int, int]]:
    """The cheapest cover of items [0, n) by consecutive [start, end) segments.

    cut_costs[i] / keep_costs[i]: price of cutting / not cutting just before item i (index 0 unused).
    glued[i]: item i may not end a segment (unless it is the last item). Glued runs must be short.
    joiner_tokens: the size of the separator placed between two items of a segment.
    """
    n = len(sizes)
    if n == 0:
        return []
    reach = [0] * (n + 1)  # reach[i]: size of items [0, i) joined, plus one trailing joiner
    kept = [0.0] * (n + 1)  # kept[i]: keep costs of positions 1..i-1
    for i, size in enumerate(sizes):
        reach[i + 1] = reach[i] + size + joiner_tokens
        kept[i + 1] = kept[i] + (keep_costs[i] if i > 0 else 0.0)
    best = [0.0] + [_UNREACHABLE] * n
    start_of = [0] * (n + 1)
    # Band.size_cost written out in the loop below (the same arithmetic in the same order, so the same floats):
    # a call per candidate segment was a third of the time of a page of many short list items (cProfile)
    minimum, target, maximum = band.minimum, band.target, band.maximum
    width = max(1, maximum - minimum)
    for end in range(1, n + 1):
        if end < n and glued[end - 1]:
            continue  # a segment may not end on a glued item
        indivisible = True
        reach_end, kept_end, best_end, chosen = reach[end], kept[end], best[end], start_of[end]
        for start in range(end - 1, -1, -1):
            if start < end - 1:
                indivisible = indivisible and glued[start]
            size = reach_end - reach[start] - joiner_tokens
            if size > maximum and not indivisible:
                break
            before = best[start]
            if before == _UNREACHABLE:
                continue
            deviation = (min(max(size, minimum), maximum) - target) / width
            size_cost = deviation * deviation
            if size < minimum:
                size_cost += BELOW_MIN_BASE + BELOW_MIN_SLOPE * (minimum - size) / minimum
            cost = before + size_cost + kept_end - kept[start + 1]
            if start > 0:
                cost += cut_costs[start]
            if cost < best_end:
                best_end, chosen = cost, start
        best[end], start_of[end] = best_end, chosen
    segments, end = [], n
    while end > 0:
        segments.append((start_of[end], end))
        end = start_of[end]
    return segments[::-1]
