// read.mjs STORE PATH
//
// Reads the Zarr array at PATH (a node path such as "sub/temp"; "" or "/"
// is the root) in STORE (a directory or a .zip file) with zarrita and writes
// its elements to standard output as zarrfs's `data` file shows them:
// C order, every element little-endian; bool one byte; fixed-size strings as
// raw bytes (|S) or UTF-32LE (<U). Arrays of variable-length strings are
// written as zarrfs's data.txt: one element per line, with backslash,
// newline and carriage return escaped.
//
// With --meta it prints a JSON line {"shape":[...],"dtype":"..."} instead.
//
// read.mjs --to OUTDIR STORE PATH... reads many arrays in one process: the
// bytes of the i-th PATH go to OUTDIR/i.bin, or its error to OUTDIR/i.err.
// read.mjs --list FILE OUTDIR does the same for the lines "STORE<TAB>PATH"
// of FILE, across stores.
//
// This is an oracle for zarrfs's tests: it must not depend on zarrfs.
import * as fs from "node:fs";
import { FileSystemStore, ZipFileStore } from "@zarrita/storage";
import * as zarr from "zarrita";
import { registerEncoders } from "./codecs.mjs";

// Node 20 has no Float16Array; zarrita only needs a 2-byte container to move
// float16 bits around, and the raw bits are exactly what we print.
if (!globalThis.Float16Array) {
	globalThis.Float16Array = class Float16Array extends Uint16Array {};
}
registerEncoders();

function usage() {
	process.stderr.write("usage: node read.mjs [--meta] STORE PATH\n");
	process.exit(2);
}

function openStore(path) {
	if (path.endsWith(".zip")) {
		const buf = fs.readFileSync(path);
		return ZipFileStore.fromBlob(new Blob([buf]));
	}
	return new FileSystemStore(path);
}

// escapeLine renders one variable-length string element as a data.txt line.
function escapeLine(s) {
	if (s === null || s === undefined) s = "";
	if (typeof s !== "string") s = String(s);
	return s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\r/g, "\\r");
}

async function main() {
	let args = process.argv.slice(2);
	let meta = false;
	if (args[0] === "--meta") {
		meta = true;
		args = args.slice(1);
	}
	if (args[0] === "--list") {
		if (args.length !== 3) usage();
		const [, listFile, outDir] = args;
		const lines = fs.readFileSync(listFile, "utf8").split("\n").filter((l) => l !== "");
		const stores = new Map();
		for (let i = 0; i < lines.length; i++) {
			const [storePath, nodePath] = lines[i].split("\t");
			try {
				if (!stores.has(storePath)) stores.set(storePath, openStore(storePath));
				const buf = await readArray(stores.get(storePath), nodePath ?? "");
				fs.writeFileSync(`${outDir}/${i}.bin`, buf);
			} catch (err) {
				fs.writeFileSync(`${outDir}/${i}.err`, String(err && err.stack ? err.stack : err));
			}
		}
		return;
	}
	if (args[0] === "--to") {
		if (args.length < 3) usage();
		const [, outDir, storePath, ...paths] = args;
		const store = openStore(storePath);
		for (let i = 0; i < paths.length; i++) {
			try {
				const buf = await readArray(store, paths[i]);
				fs.writeFileSync(`${outDir}/${i}.bin`, buf);
			} catch (err) {
				fs.writeFileSync(`${outDir}/${i}.err`, String(err && err.stack ? err.stack : err));
			}
		}
		return;
	}
	if (args.length !== 2) usage();
	const [storePath, nodePath] = args;
	const store = openStore(storePath);
	if (meta) {
		const arr = await openArray(store, nodePath);
		process.stdout.write(
			JSON.stringify({ shape: arr.shape, dtype: String(arr.dtype) }) + "\n",
		);
		return;
	}
	await write(await readArray(store, nodePath));
}

async function openArray(store, nodePath) {
	let loc = zarr.root(store);
	const p = nodePath.replace(/^\/+|\/+$/g, "");
	if (p !== "") loc = loc.resolve(p);
	return zarr.open(loc, { kind: "array" });
}

// readArray returns the bytes zarrfs's data (or data.txt) shows for the
// array at nodePath.
async function readArray(store, nodePath) {
	const arr = await openArray(store, nodePath);
	// zarrita 0.7.5 throws on arrays with a zero-length dimension; their
	// content is empty.
	if (arr.shape.some((d) => d === 0)) return Buffer.alloc(0);
	// zarr.get answers a bare scalar for rank 0: read its one chunk instead.
	const out = arr.shape.length === 0 ? await arr.getChunk([]) : await zarr.get(arr);
	const data = out.data;
	if (globalThis.Array.isArray(data)) {
		const lines = data.map((s) => escapeLine(s) + "\n").join("");
		return Buffer.from(lines, "utf8");
	}
	// zarr.get returns native (little-endian on every platform we run on)
	// elements, but in the chunk's memory order (F after a transpose codec):
	// copy them into C order.
	const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
	return toCOrder(bytes, data.BYTES_PER_ELEMENT, out.shape, out.stride);
}

function toCOrder(bytes, itemsize, shape, stride) {
	const n = shape.reduce((a, b) => a * b, 1);
	let isC = true;
	let want = 1;
	for (let i = shape.length - 1; i >= 0; i--) {
		if (shape[i] > 1 && stride[i] !== want) isC = false;
		want *= shape[i];
	}
	if (isC) return Buffer.from(bytes.buffer, bytes.byteOffset, n * itemsize);
	const res = Buffer.alloc(n * itemsize);
	const idx = new Array(shape.length).fill(0);
	for (let k = 0; k < n; k++) {
		let src = 0;
		for (let d = 0; d < shape.length; d++) src += idx[d] * stride[d];
		res.set(bytes.subarray(src * itemsize, (src + 1) * itemsize), k * itemsize);
		for (let d = shape.length - 1; d >= 0; d--) {
			if (++idx[d] < shape[d]) break;
			idx[d] = 0;
		}
	}
	return res;
}

function write(buf) {
	return new Promise((resolve, reject) => {
		process.stdout.write(buf, (err) => (err ? reject(err) : resolve()));
	});
}

main().catch((err) => {
	process.stderr.write(`read.mjs: ${err && err.stack ? err.stack : err}\n`);
	process.exit(1);
});
