// Small helpers over the standard collections.

/**
 * Appends values to the list a map holds under `key`, making the list if there is none. In place:
 * building each list by copying it per value (`set(key, [...(get(key) ?? []), value])`) is
 * quadratic in its length, and a list can be a subject's thousands of readings.
 */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, ...values: V[]): void {
  const list = map.get(key);
  if (list) list.push(...values);
  else map.set(key, values);
}
