"""libstdc++'s std::sort, std::partial_sort and std::nth_element, step for step, on a Python
list: ATen's CPU topk (TopKImpl.h) and mode (TensorCompareKernel.cpp) order (value, index)
pairs with them and a comparator on the values only, so which of several equal values they
return, and so where the gradient goes, is whatever these algorithms leave there. (Not
stable: past 16 elements, equal values come out in the order the introsort's partitions
leave them.) Iterative (an explicit stack), so no recursion over a user-sized input."""

from __future__ import annotations

from collections.abc import Callable

_THRESHOLD = 16  # libstdc++'s _S_threshold

Less = Callable[[object, object], bool]


def _lg(n: int) -> int:
    return n.bit_length() - 1


# --- heaps: __make_heap, __adjust_heap, __push_heap, __pop_heap, __heap_select, __sort_heap ----
def _push_heap(v: list, first: int, hole: int, top: int, value, less: Less) -> None:
    parent = (hole - 1) // 2
    while hole > top and less(v[first + parent], value):
        v[first + hole] = v[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = value


def _adjust_heap(v: list, first: int, hole: int, length: int, value, less: Less) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(v[first + child], v[first + child - 1]):
            child -= 1
        v[first + hole] = v[first + child]
        hole = child
    if length & 1 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole] = v[first + child - 1]
        hole = child - 1
    _push_heap(v, first, hole, top, value, less)


def _make_heap(v: list, first: int, last: int, less: Less) -> None:
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(v, first, parent, length, v[first + parent], less)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(v: list, first: int, last: int, result: int, less: Less) -> None:
    value = v[result]
    v[result] = v[first]
    _adjust_heap(v, first, 0, last - first, value, less)


def _heap_select(v: list, first: int, middle: int, last: int, less: Less) -> None:
    _make_heap(v, first, middle, less)
    for i in range(middle, last):
        if less(v[i], v[first]):
            _pop_heap(v, first, middle, i, less)


def _sort_heap(v: list, first: int, last: int, less: Less) -> None:
    while last - first > 1:
        last -= 1
        _pop_heap(v, first, last, last, less)


# --- partitions and insertion sorts -------------------------------------------------------------
def _move_median_to_first(v: list, result: int, a: int, b: int, c: int, less: Less) -> None:
    if less(v[a], v[b]):
        if less(v[b], v[c]):
            pick = b
        elif less(v[a], v[c]):
            pick = c
        else:
            pick = a
    elif less(v[a], v[c]):
        pick = a
    elif less(v[b], v[c]):
        pick = c
    else:
        pick = b
    v[result], v[pick] = v[pick], v[result]


def _unguarded_partition(v: list, first: int, last: int, pivot: int, less: Less) -> int:
    while True:
        while less(v[first], v[pivot]):
            first += 1
        last -= 1
        while less(v[pivot], v[last]):
            last -= 1
        if not first < last:
            return first
        v[first], v[last] = v[last], v[first]
        first += 1


def _partition_pivot(v: list, first: int, last: int, less: Less) -> int:
    mid = first + (last - first) // 2
    _move_median_to_first(v, first, first + 1, mid, last - 1, less)
    return _unguarded_partition(v, first + 1, last, first, less)


def _linear_insert(v: list, last: int, less: Less) -> None:
    value = v[last]
    nxt = last - 1
    while less(value, v[nxt]):
        v[last] = v[nxt]
        last = nxt
        nxt -= 1
    v[last] = value


def _insertion_sort(v: list, first: int, last: int, less: Less) -> None:
    for i in range(first + 1, last):
        if less(v[i], v[first]):
            value = v[i]
            v[first + 1:i + 1] = v[first:i]
            v[first] = value
        else:
            _linear_insert(v, i, less)


# --- the algorithms ------------------------------------------------------------------------------
def sort(v: list, less: Less, first: int = 0, last: int | None = None) -> None:
    """std::sort(v.begin() + first, v.begin() + last, less)."""
    last = len(v) if last is None else last
    if last - first < 2:
        return
    stack = [(first, last, 2 * _lg(last - first))]
    while stack:  # (__introsort_loop; its ranges are disjoint, so their order does not matter)
        lo, hi, depth = stack.pop()
        while hi - lo > _THRESHOLD:
            if depth == 0:
                _heap_select(v, lo, hi, hi, less)
                _sort_heap(v, lo, hi, less)
                break
            depth -= 1
            cut = _partition_pivot(v, lo, hi, less)
            stack.append((cut, hi, depth))
            hi = cut
    if last - first > _THRESHOLD:  # __final_insertion_sort
        _insertion_sort(v, first, first + _THRESHOLD, less)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(v, i, less)
    else:
        _insertion_sort(v, first, last, less)


def partial_sort(v: list, middle: int, less: Less) -> None:
    """std::partial_sort(v.begin(), v.begin() + middle, v.end(), less)."""
    _heap_select(v, 0, middle, len(v), less)
    _sort_heap(v, 0, middle, less)


def nth_element(v: list, nth: int, less: Less) -> None:
    """std::nth_element(v.begin(), v.begin() + nth, v.end(), less) (__introselect)."""
    first, last = 0, len(v)
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(v, first, nth + 1, last, less)
            v[first], v[nth] = v[nth], v[first]
            return
        depth -= 1
        cut = _partition_pivot(v, first, last, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(v, first, last, less)
