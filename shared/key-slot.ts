/**
 * The Redis Cluster slot of a key (CLUSTER KEYSLOT): CRC16 (XMODEM) of its hash tag (the part between
 * the first `{` and the next `}`, when not empty) or of the whole key, modulo 16384.
 */
export const clusterSlots = 16384;

const table = (() => {
  const rows = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte += 1) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    rows[byte] = crc & 0xffff;
  }
  return rows;
})();

/** CRC16/XMODEM of the text's UTF-8 bytes, as Redis computes it. */
export function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, 'utf8')) crc = ((crc << 8) & 0xffff) ^ table[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

/** The part of `key` Redis hashes: its hash tag's content when it has a non-empty one, else the key. */
export function hashedPart(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

export function keySlot(key: string): number {
  return crc16(hashedPart(key)) % clusterSlots;
}
