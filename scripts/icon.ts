/**
 * Draws the app icon, desktop/build/icon.png (512×512, what electron-builder turns into each
 * platform's icon format): a white "A" on an indigo rounded square. Kept as code so the committed PNG
 * can be regenerated: `bun scripts/icon.ts`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

const SIZE = 512;
type Segment = [number, number, number, number];
const STROKES: Segment[] = [
  [256, 112, 144, 404],
  [256, 112, 368, 404],
  [186, 304, 326, 304],
];
const STROKE_HALF_WIDTH = 26;

function distanceToSegment(x: number, y: number, [x1, y1, x2, y2]: Segment): number {
  const dx = x2 - x1;
  const dy = y2 - y1;
  const t = Math.max(0, Math.min(1, ((x - x1) * dx + (y - y1) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(x - (x1 + t * dx), y - (y1 + t * dy));
}

/** Coverage 0..1 of a rounded square with corner radius r, anti-aliased over one pixel. */
function squareCoverage(x: number, y: number, r: number): number {
  const cx = Math.min(Math.max(x, r), SIZE - r);
  const cy = Math.min(Math.max(y, r), SIZE - r);
  return Math.max(0, Math.min(1, r - Math.hypot(x - cx, y - cy) + 0.5));
}

function pixels(): Buffer {
  const rows = Buffer.alloc(SIZE * (SIZE * 4 + 1));
  for (let y = 0; y < SIZE; y++) {
    const row = y * (SIZE * 4 + 1);
    rows[row] = 0; // filter: none
    for (let x = 0; x < SIZE; x++) {
      const px = x + 0.5;
      const py = y + 0.5;
      const d = Math.min(...STROKES.map((s) => distanceToSegment(px, py, s)));
      const letter = Math.max(0, Math.min(1, STROKE_HALF_WIDTH - d + 0.5));
      const at = row + 1 + x * 4;
      rows[at] = Math.round(79 + (255 - 79) * letter);
      rows[at + 1] = Math.round(70 + (255 - 70) * letter);
      rows[at + 2] = Math.round(229 + (255 - 229) * letter);
      rows[at + 3] = Math.round(255 * squareCoverage(px, py, 96));
    }
  }
  return rows;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

export function iconPng(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIZE, 0);
  header.writeUInt32BE(SIZE, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(pixels(), { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

if (import.meta.main) {
  const path = join(import.meta.dir, "..", "desktop", "build", "icon.png");
  writeFileSync(path, iconPng());
  process.stdout.write(`wrote ${path}\n`);
}
