// write_sharded.mjs DIR PATH ROWS COLS SHARD_ROWS SHARD_COLS CHUNK_ROWS CHUNK_COLS
//
// Writes a v3 float32 array at DIR/PATH (DIR must already hold a v3 root
// group, or be absent) with the sharding_indexed codec: inner chunks
// through bytes (little-endian) + zstd + crc32c, the shard index through
// bytes + crc32c at the end of each shard. zarrita 0.7.5 reads sharded
// arrays but cannot write them, so this script lays the shards out as the
// v3 sharding spec says, encoding every inner chunk with zarrita's own
// codecs (its zstd, and the crc32c of codecs.mjs). Some inner chunks are
// left out (index entries of 2^64-1), and inner chunks wholly outside the
// array are never written. Read the array back with read.mjs: zarrita's
// reading is the reference.
//
// This is an oracle for zarrfs's tests: it must not depend on zarrfs.
import * as fs from "node:fs";
import * as path from "node:path";
import * as zarr from "zarrita";
import { crc32c, registerEncoders } from "./codecs.mjs";

registerEncoders();

const FILL = -1.5;

// value is element (i, j) of the array: distinct across chunks.
function value(i, j, cols) {
	const k = i * cols + j;
	return ((k * 2654435761) % 1048573) * 0.25 - 5000;
}

async function main() {
	const args = process.argv.slice(2);
	if (args.length !== 8) {
		process.stderr.write("usage: node write_sharded.mjs DIR PATH ROWS COLS SHARD_ROWS SHARD_COLS CHUNK_ROWS CHUNK_COLS\n");
		process.exit(2);
	}
	const [dir, p] = args;
	const [rows, cols, sr, sc, cr, cc] = args.slice(2).map(Number);
	if (sr % cr || sc % cc) throw new Error("the shard shape must be a multiple of the chunk shape");
	const root = path.join(dir, p);
	fs.mkdirSync(root, { recursive: true });
	if (!fs.existsSync(path.join(dir, "zarr.json"))) {
		fs.writeFileSync(path.join(dir, "zarr.json"), JSON.stringify({ zarr_format: 3, node_type: "group", attributes: {} }));
	}
	const innerCodecs = [
		{ name: "bytes", configuration: { endian: "little" } },
		{ name: "zstd", configuration: { level: 3, checksum: false } },
		{ name: "crc32c" },
	];
	const meta = {
		zarr_format: 3,
		node_type: "array",
		shape: [rows, cols],
		data_type: "float32",
		chunk_grid: { name: "regular", configuration: { chunk_shape: [sr, sc] } },
		chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
		fill_value: FILL,
		codecs: [
			{
				name: "sharding_indexed",
				configuration: {
					chunk_shape: [cr, cc],
					codecs: innerCodecs,
					index_codecs: [{ name: "bytes", configuration: { endian: "little" } }, { name: "crc32c" }],
					index_location: "end",
				},
			},
		],
		attributes: { writer: "write_sharded.mjs" },
		dimension_names: ["y", "x"],
	};
	fs.writeFileSync(path.join(root, "zarr.json"), JSON.stringify(meta, null, 2));

	const Zstd = await zarr.registry.get("zstd")();
	const zstd = Zstd.fromConfig({ level: 3, checksum: false });
	const Crc = await zarr.registry.get("crc32c")();
	const crc = Crc.fromConfig({});

	const perRow = sr / cr, perCol = sc / cc, inner = perRow * perCol;
	for (let si = 0; si * sr < rows; si++) {
		for (let sj = 0; sj * sc < cols; sj++) {
			const parts = [];
			let offset = 0;
			const index = new BigUint64Array(2 * inner).fill(0xffffffffffffffffn);
			for (let a = 0; a < perRow; a++) {
				for (let b = 0; b < perCol; b++) {
					const i0 = si * sr + a * cr, j0 = sj * sc + b * cc;
					if (i0 >= rows || j0 >= cols) continue; // outside the array
					if ((si * 7 + sj * 3 + a * 5 + b) % 11 === 4) continue; // left to the fill value
					const chunk = new Float32Array(cr * cc).fill(FILL);
					for (let x = 0; x < cr && i0 + x < rows; x++) {
						for (let y = 0; y < cc && j0 + y < cols; y++) {
							chunk[x * cc + y] = value(i0 + x, j0 + y, cols);
						}
					}
					const raw = new Uint8Array(chunk.buffer); // little-endian hosts only
					const enc = crc.encode(await zstd.encode(raw));
					const k = a * perCol + b;
					index[2 * k] = BigInt(offset);
					index[2 * k + 1] = BigInt(enc.length);
					parts.push(enc);
					offset += enc.length;
				}
			}
			if (parts.length === 0) continue; // a shard with no chunk is not written
			const idx = new Uint8Array(index.buffer);
			const idxCrc = new Uint8Array(4);
			new DataView(idxCrc.buffer).setUint32(0, crc32c(idx), true);
			const keyDir = path.join(root, "c", String(si));
			fs.mkdirSync(keyDir, { recursive: true });
			fs.writeFileSync(path.join(keyDir, String(sj)), Buffer.concat([...parts, idx, idxCrc]));
		}
	}
}

main().catch((err) => {
	process.stderr.write(`write_sharded.mjs: ${err && err.stack ? err.stack : err}\n`);
	process.exit(1);
});
