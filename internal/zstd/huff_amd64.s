//go:build amd64 && !purego

#include "textflag.h"

// DECODE decodes one symbol of a Huffman stream whose unread bits are at
// the top of v (c bits of its 8-byte window read) into dst, with the
// 11-bit table in R8. It uses AX and CX.
#define DECODE(v, c, dst) \
	MOVQ    v, AX; \
	SHRQ    $53, AX; \
	MOVWLZX (R8)(AX*2), AX; \
	MOVB    AL, dst; \
	MOVL    AX, CX; \
	SHRL    $8, CX; \
	SHLQ    CL, v; \
	ADDQ    CX, c

// DECODE4 decodes symbol i of the run of each of the four streams (their
// quarters of out, from R9, q bytes apart: R10, 2*R10, R11 = 3*R10).
#define DECODE4(i) \
	DECODE(R12, SI, i(R9)); \
	DECODE(R13, DI, i(R9)(R10*1)); \
	DECODE(R14, BX, i(R9)(R10*2)); \
	DECODE(R15, DX, i(R9)(R11*1))

// LOAD loads the 8-byte window of the bitReader at AX+in (its off at
// AX+off) into v, with the c bits already read shifted out. It uses CX.
#define LOAD(v, c, in, off) \
	MOVQ off(AX), CX; \
	ADDQ in(AX), CX; \
	MOVQ (CX), v; \
	MOVQ c, CX; \
	SHLQ CL, v

// RELOAD moves a stream's window back over the bytes its c bits cover and
// loads it into v: the bitReader at AX+in (its off at AX+off) gets the new
// off, c keeps the bits read of the window's first byte. It uses CX.
#define RELOAD(v, c, in, off) \
	MOVQ c, CX; \
	SHRQ $3, CX; \
	ANDQ $7, c; \
	SUBQ CX, off(AX); \
	LOAD(v, c, in, off)

// func huff4AMD64(t *[1 << huffTableLog]huffEntry, out *byte, q, n int, br *[4]bitReader) int
//
// Decodes the four Huffman streams of br, each into its quarter of out
// (q bytes apart), five symbols of each per iteration, until n symbols of
// each are done or a stream has fewer than 8 bytes left before its
// window. Each bitReader's off and bitsRead are left where its stream
// stands (its value is the caller's to reload). Returns the symbols done
// per stream. The caller sees to it that every off is at least 8, every
// bitsRead at most 8, and n a multiple of 5 at most the last quarter's
// length.
TEXT ·huff4AMD64(SB), NOSPLIT, $0-48
	MOVQ t+0(FP), R8
	MOVQ out+8(FP), R9
	MOVQ q+16(FP), R10
	LEAQ (R10)(R10*2), R11
	MOVQ br+32(FP), AX

	// bitReader: in at 0, off at 24, value at 32, bitsRead at 40; 48 bytes.
	MOVQ 40(AX), SI
	LOAD(R12, SI, 0, 24)
	MOVQ 88(AX), DI
	LOAD(R13, DI, 48, 72)
	MOVQ 136(AX), BX
	LOAD(R14, BX, 96, 120)
	MOVQ 184(AX), DX
	LOAD(R15, DX, 144, 168)

	MOVQ n+24(FP), CX
	ADDQ R9, CX
	MOVQ CX, n+24(FP) // the end of the first quarter's run

loop:
	CMPQ R9, n+24(FP)
	JAE  done
	DECODE4(0)
	DECODE4(1)
	DECODE4(2)
	DECODE4(3)
	DECODE4(4)
	ADDQ $5, R9

	// Five symbols take at most 55 bits of the 56 or more unread: reload.
	MOVQ br+32(FP), AX
	RELOAD(R12, SI, 0, 24)
	RELOAD(R13, DI, 48, 72)
	RELOAD(R14, BX, 96, 120)
	RELOAD(R15, DX, 144, 168)
	CMPQ 24(AX), $8
	JLT  done
	CMPQ 72(AX), $8
	JLT  done
	CMPQ 120(AX), $8
	JLT  done
	CMPQ 168(AX), $8
	JLT  done
	JMP  loop

done:
	MOVQ br+32(FP), AX
	MOVQ SI, 40(AX)
	MOVQ DI, 88(AX)
	MOVQ BX, 136(AX)
	MOVQ DX, 184(AX)
	SUBQ out+8(FP), R9
	MOVQ R9, ret+40(FP)
	RET
