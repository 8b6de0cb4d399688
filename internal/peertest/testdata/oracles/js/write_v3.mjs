// write_v3.mjs DIR
//
// Writes a v3 hierarchy of arrays with zarrita into DIR (which must not yet
// hold one) and prints the node path of every array, one per line. The set
// covers every fixed-size numeric data type and bool, the bytes codec in both
// byte orders, transpose, zstd, gzip and crc32c, odd shapes with edge chunks,
// size-1 and zero-length dimensions, both chunk key separators and partly
// written arrays (missing chunks read as a non-zero fill value).
//
// This is an oracle for zarrfs's tests: it must not depend on zarrfs.
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";
import { registerEncoders } from "./codecs.mjs";

registerEncoders();

const CTORS = {
	bool: zarr.BoolArray,
	int8: Int8Array,
	int16: Int16Array,
	int32: Int32Array,
	int64: BigInt64Array,
	uint8: Uint8Array,
	uint16: Uint16Array,
	uint32: Uint32Array,
	uint64: BigUint64Array,
	float32: Float32Array,
	float64: Float64Array,
};

// value returns a deterministic element i of dtype, spanning negative
// numbers, large magnitudes and non-finite floats.
function value(dtype, i) {
	const k = i * 2654435761;
	switch (dtype) {
		case "bool":
			return (i * 7) % 3 === 0;
		case "int8":
			return ((k % 256) + 256) % 256 - 128;
		case "uint8":
			return k % 256;
		case "int16":
			return ((k % 65536) + 65536) % 65536 - 32768;
		case "uint16":
			return k % 65536;
		case "int32":
			return (k % 4294967296) - 2147483648;
		case "uint32":
			return k % 4294967296;
		case "int64":
			return BigInt.asIntN(64, BigInt(i) * 0x9e3779b97f4a7c15n);
		case "uint64":
			return BigInt.asUintN(64, BigInt(i) * 0x9e3779b97f4a7c15n);
		case "float32":
		case "float64":
			if (i % 17 === 5) return Number.NaN;
			if (i % 19 === 7) return i % 2 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
			if (i % 23 === 3) return -0;
			return (i - 10) * 1.25e-3 * (i % 3 ? 1 : 1e6);
	}
	throw new Error(`no values for ${dtype}`);
}

function fillFor(dtype) {
	switch (dtype) {
		case "bool":
			return true;
		case "float32":
		case "float64":
			return -2.5;
		case "uint8":
		case "uint16":
		case "uint32":
		case "uint64":
			return 7;
		default:
			return -7;
	}
}

function filled(dtype, shape, offset = 0) {
	const n = shape.reduce((a, b) => a * b, 1);
	const data = new CTORS[dtype](n);
	for (let i = 0; i < n; i++) {
		if (dtype === "bool") data.set(i, value(dtype, i + offset));
		else data[i] = value(dtype, i + offset);
	}
	return data;
}

function cStrides(shape) {
	const s = new Array(shape.length);
	let step = 1;
	for (let i = shape.length - 1; i >= 0; i--) {
		s[i] = step;
		step *= shape[i];
	}
	return s;
}

const codecSets = {
	le: () => [{ name: "bytes", configuration: { endian: "little" } }],
	be: () => [{ name: "bytes", configuration: { endian: "big" } }],
	zstd: () => [
		{ name: "bytes", configuration: { endian: "little" } },
		{ name: "zstd", configuration: { level: 3, checksum: false } },
	],
	gzip: () => [
		{ name: "bytes", configuration: { endian: "little" } },
		{ name: "gzip", configuration: { level: 5 } },
	],
	crc32c: () => [
		{ name: "bytes", configuration: { endian: "little" } },
		{ name: "crc32c" },
	],
	// transpose needs a rank: the order is reversed axes.
	tr: (rank) => [
		{ name: "transpose", configuration: { order: [...Array(rank).keys()].reverse() } },
		{ name: "bytes", configuration: { endian: "little" } },
	],
	all: (rank) => [
		{ name: "transpose", configuration: { order: [...Array(rank).keys()].reverse() } },
		{ name: "bytes", configuration: { endian: "big" } },
		{ name: "gzip", configuration: { level: 1 } },
		{ name: "crc32c" },
	],
};

const DTYPES = Object.keys(CTORS);

// cases lists [name, dtype, shape, chunks, codecs, separator, partial].
function cases() {
	const out = [];
	// Every dtype in every codec chain, one 2-d odd shape with edge chunks.
	for (const dt of DTYPES) {
		for (const cs of ["le", "be", "zstd", "gzip", "crc32c", "tr", "all"]) {
			// zarrita 0.7.5 byte-swaps bool chunks in groups of 4 under
			// "endian": "big" (bool has no byte order): its chunks are wrong.
			if (dt === "bool" && (cs === "be" || cs === "all")) continue;
			out.push([`${dt}/${cs}`, dt, [5, 7], [2, 3], cs, "/", false]);
		}
	}
	// Shapes: rank 1-4, size-1 and zero-length dimensions, chunks larger than
	// the array, partly written arrays and the "." separator.
	const shapes = [
		["r1", [13], [4]],
		["r1big", [3], [10]],
		["r3", [3, 4, 5], [2, 3, 2]],
		["r4", [2, 3, 1, 5], [1, 2, 1, 3]],
		["one", [1, 1], [1, 1]],
		["empty", [0, 3], [2, 2]],
		["empty1", [4, 0], [2, 2]],
	];
	for (const [nm, shape, chunks] of shapes) {
		for (const [dt, cs] of [["int16", "le"], ["float64", "all"], ["uint64", "zstd"], ["bool", "tr"]]) {
			out.push([`shapes/${nm}_${dt}_${cs}`, dt, shape, chunks, cs, "/", false]);
		}
	}
	for (const [dt, cs] of [["int32", "le"], ["float32", "be"], ["uint8", "all"], ["bool", "crc32c"], ["int64", "tr"]]) {
		out.push([`partial/${dt}_${cs}`, dt, [9, 8], [2, 3], cs, "/", true]);
		out.push([`partial3/${dt}_${cs}`, dt, [5, 4, 3], [2, 3, 2], cs, ".", true]);
	}
	out.push(["dotsep/f8", "float64", [6, 5], [4, 2], "zstd", ".", false]);
	// Rank 0: one element, chunk key "c"; one written, one left to the fill value.
	out.push(["scalar/f8_be", "float64", [], [], "be", "/", false]);
	out.push(["scalar/i4_missing", "int32", [], [], "le", "/", true]);
	return out;
}

async function main() {
	const dir = process.argv[2];
	if (!dir || process.argv.length !== 3) {
		process.stderr.write("usage: node write_v3.mjs DIR\n");
		process.exit(2);
	}
	const store = new FileSystemStore(dir);
	const root = zarr.root(store);
	await zarr.create(root, { attributes: { writer: "zarrita" } });
	const groups = new Set();
	const paths = [];
	for (const [name, dtype, shape, chunks, cs, sep, partial] of cases()) {
		const parts = name.split("/");
		for (let i = 1; i < parts.length; i++) {
			const g = parts.slice(0, i).join("/");
			if (!groups.has(g)) {
				groups.add(g);
				await zarr.create(root.resolve(g));
			}
		}
		const arr = await zarr.create(root.resolve(name), {
			shape,
			chunkShape: chunks,
			dtype,
			codecs: codecSets[cs](shape.length),
			fillValue: fillFor(dtype),
			chunkSeparator: sep,
			dimensionNames: shape.map((_, i) => `d${i}`),
			attributes: { case: name },
		});
		const n = shape.reduce((a, b) => a * b, 1);
		if (shape.length === 0) {
			if (!partial) await zarr.set(arr, null, value(dtype, 3));
		} else if (n > 0) {
			if (partial) {
				// Write only a region: the leading half of axis 0 over the
				// leading part of axis 1; the untouched chunks stay missing.
				const sub = shape.slice();
				sub[0] = Math.max(1, Math.floor(shape[0] / 2));
				sub[1] = Math.max(1, shape[1] - chunks[1]);
				const sel = sub.map((s) => zarr.slice(0, s));
				await zarr.set(arr, sel, { data: filled(dtype, sub, 11), shape: sub, stride: cStrides(sub) });
			} else {
				await zarr.set(arr, null, { data: filled(dtype, shape), shape, stride: cStrides(shape) });
			}
		}
		paths.push(name);
	}
	process.stdout.write(paths.map((p) => p + "\n").join(""));
}

main().catch((err) => {
	process.stderr.write(`write_v3.mjs: ${err && err.stack ? err.stack : err}\n`);
	process.exit(1);
});
