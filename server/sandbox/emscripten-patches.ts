/**
 * Two steps of pyodide's generated Emscripten module (pyodide.asm.mjs) done in bulk, as text patches
 * applied when the worker loads that module (pyodide-start.ts). Each patch replaces one exact piece of
 * the pinned build's text and applies only where that piece occurs exactly once; any other build loads
 * unpatched. Neither changes what the interpreter's memory or function table hold, only how fast they
 * get there, so a snapshot made with or without them restores the same; the snapshot's key names them
 * all the same (snapshot.ts), so a change here makes a new snapshot rather than trusting that claim.
 *
 * - `table`: linking the runtime adds its symbols to the WebAssembly function table one at a time, and
 *   each took a slot by growing the table by one (JavaScriptCore copies the table on every grow: about
 *   a sixth of a start). Here the table grows by a block and the block's other slots wait in the module's
 *   own list of free slots, in order, so every symbol gets the slot it got before.
 * - `restore`: a snapshot's 31 MB of memory was copied over the fresh memory whole, writing (and so
 *   faulting in) every page, half of them zero. Here a 64 KiB block that is zero in the snapshot and in
 *   the fresh memory is left as it is: the result is byte for byte the same.
 */

export type PatchName = "table" | "restore";

/** Slots the function table grows by when it runs out. */
const TABLE_BLOCK = 512;

interface Patch {
  name: PatchName;
  from: string;
  to: string;
  /** Definitions the replacement uses, put before the module's text. */
  prefix?: string;
}

const PATCHES: Patch[] = [
  {
    name: "table",
    from: 'var getEmptyTableSlot=()=>{if(freeTableIndexes.length){return freeTableIndexes.pop()}return wasmTable["grow"](1)};',
    to: `var getEmptyTableSlot=()=>{if(freeTableIndexes.length){return freeTableIndexes.pop()}var first=wasmTable["grow"](${TABLE_BLOCK});for(var i=first+${TABLE_BLOCK - 1};i>first;i--)freeTableIndexes.push(i);return first};`,
  },
  {
    name: "restore",
    from: "return Module.HEAP8.set(t),l}",
    to: "return __atriumRestoreMemory(Module.HEAP8,t),l}",
    prefix: `var __atriumRestoreMemory=(heap,image)=>{var block=65536;var zero=Buffer.alloc(block);for(var at=0;at<image.length;at+=block){var n=Math.min(block,image.length-at);var part=Buffer.from(image.buffer,image.byteOffset+at,n);var none=n===block?zero:zero.subarray(0,n);if(part.equals(none)&&Buffer.from(heap.buffer,heap.byteOffset+at,n).equals(none))continue;heap.set(part,at)}};`,
  },
];

/** A text to key snapshots by: changes with any patch. */
export const PATCHES_VERSION = PATCHES.map((p) => `${p.name}:${p.to}:${p.prefix ?? ""}`).join("\n");

/** `source` with every patch whose piece occurs exactly once applied, and their names. */
export function applyPatches(source: string): { text: string; applied: PatchName[] } {
  let text = source;
  const applied: PatchName[] = [];
  const prefixes: string[] = [];
  for (const patch of PATCHES) {
    const at = text.indexOf(patch.from);
    if (at === -1 || text.indexOf(patch.from, at + 1) !== -1) continue;
    text = text.slice(0, at) + patch.to + text.slice(at + patch.from.length);
    if (patch.prefix) prefixes.push(patch.prefix);
    applied.push(patch.name);
  }
  return { text: prefixes.length > 0 ? `${prefixes.join("")}\n${text}` : text, applied };
}
