// Codecs that zarrita 0.7.5 can decode but not encode (gzip, zlib, crc32c),
// registered in its codec registry with both directions so that
// write_v3.mjs can write them. Decoding is strict: crc32c checks the
// checksum instead of dropping it.
import * as zlib from "node:zlib";
import * as zarr from "zarrita";

const CRC32C_TABLE = (() => {
	const t = new Uint32Array(256);
	for (let n = 0; n < 256; n++) {
		let c = n;
		for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
		t[n] = c >>> 0;
	}
	return t;
})();

export function crc32c(bytes) {
	let c = 0xffffffff;
	for (let i = 0; i < bytes.length; i++) {
		c = CRC32C_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
	}
	return (c ^ 0xffffffff) >>> 0;
}

class Crc32c {
	kind = "bytes_to_bytes";
	static fromConfig() {
		return new Crc32c();
	}
	encode(bytes) {
		const out = new Uint8Array(bytes.length + 4);
		out.set(bytes, 0);
		new DataView(out.buffer).setUint32(bytes.length, crc32c(bytes), true);
		return out;
	}
	decode(bytes) {
		if (bytes.length < 4) throw new Error("crc32c: chunk shorter than its checksum");
		const body = bytes.subarray(0, bytes.length - 4);
		const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
		const want = dv.getUint32(bytes.length - 4, true);
		if (crc32c(body) !== want) throw new Error("crc32c: checksum mismatch");
		return body;
	}
	computeEncodedSize(n) {
		return n + 4;
	}
}

function u8(buf) {
	return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

class Gzip {
	kind = "bytes_to_bytes";
	constructor(level) {
		this.level = level;
	}
	static fromConfig(config) {
		return new Gzip(config?.level ?? 5);
	}
	encode(bytes) {
		return u8(zlib.gzipSync(bytes, { level: this.level }));
	}
	decode(bytes) {
		return u8(zlib.gunzipSync(bytes));
	}
}

class Zlib {
	kind = "bytes_to_bytes";
	constructor(level) {
		this.level = level;
	}
	static fromConfig(config) {
		return new Zlib(config?.level ?? 5);
	}
	encode(bytes) {
		return u8(zlib.deflateSync(bytes, { level: this.level }));
	}
	decode(bytes) {
		return u8(zlib.inflateSync(bytes));
	}
}

export function registerEncoders() {
	zarr.registry.set("crc32c", () => Crc32c);
	zarr.registry.set("gzip", () => Gzip);
	zarr.registry.set("numcodecs.gzip", () => Gzip);
	zarr.registry.set("zlib", () => Zlib);
	zarr.registry.set("numcodecs.zlib", () => Zlib);
}
