// Natural order for names people read: gpu-r1-n2 before gpu-r1-n10 (digit runs compare
// as numbers), used for every list the playground shows (nodes and racks on the map,
// workloads, pods, menus, tables). Ties (names equal but for case or leading zeros) fall
// back to code-unit order, so the order is total and the same on every machine.

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' });

/** Compares two names in natural order (a comparator for `Array.prototype.sort`). */
export function naturalCompare(a, b) {
  const x = String(a ?? '');
  const y = String(b ?? '');
  return collator.compare(x, y) || (x < y ? -1 : x > y ? 1 : 0);
}

/** A copy of `list` sorted naturally by `key(item)` (default: the item itself). */
export function naturalSort(list, key = (x) => x) {
  return list.slice().sort((a, b) => naturalCompare(key(a), key(b)));
}
