//go:build amd64 && !purego

#include "textflag.h"

// The masks of the three steps of the 8×8 bit transpose (transpose8x8),
// for both 64-bit lanes.
DATA bitmask7<>+0(SB)/8, $0x00AA00AA00AA00AA
DATA bitmask7<>+8(SB)/8, $0x00AA00AA00AA00AA
GLOBL bitmask7<>(SB), RODATA|NOPTR, $16
DATA bitmask14<>+0(SB)/8, $0x0000CCCC0000CCCC
DATA bitmask14<>+8(SB)/8, $0x0000CCCC0000CCCC
GLOBL bitmask14<>(SB), RODATA|NOPTR, $16
DATA bitmask28<>+0(SB)/8, $0x00000000F0F0F0F0
DATA bitmask28<>+8(SB)/8, $0x00000000F0F0F0F0
GLOBL bitmask28<>(SB), RODATA|NOPTR, $16

// TRANS transposes the 8×8 bit matrices in both 64-bit lanes of x, using
// X15; the masks are in X12, X13, X14.
#define TRANS(x) \
	MOVO x, X15; PSRLQ $7, X15; PXOR x, X15; PAND X12, X15; PXOR X15, x; PSLLQ $7, X15; PXOR X15, x; \
	MOVO x, X15; PSRLQ $14, X15; PXOR x, X15; PAND X13, X15; PXOR X15, x; PSLLQ $14, X15; PXOR X15, x; \
	MOVO x, X15; PSRLQ $28, X15; PXOR x, X15; PAND X14, X15; PXOR X15, x; PSLLQ $28, X15; PXOR X15, x

// func bitunshuffle1SSE2(dst, src []byte, rowLen int)
// Undoes the bit shuffle of one byte plane: src holds 8 rows of rowLen
// bytes (row b: bit b of every byte, byte 8k+m at bit m of byte k); dst
// gets the first 8*(rowLen&^15) bytes, 128 per iteration.
TEXT ·bitunshuffle1SSE2(SB), NOSPLIT, $0-56
	MOVQ  dst_base+0(FP), DI
	MOVQ  src_base+24(FP), SI
	MOVQ  rowLen+48(FP), CX
	MOVOU bitmask7<>(SB), X12
	MOVOU bitmask14<>(SB), X13
	MOVOU bitmask28<>(SB), X14
	LEAQ  (SI)(CX*1), R8
	LEAQ  (R8)(CX*1), R9
	LEAQ  (R9)(CX*1), R10
	LEAQ  (R10)(CX*1), R11
	LEAQ  (R11)(CX*1), R12
	LEAQ  (R12)(CX*1), R13
	LEAQ  (R13)(CX*1), R14
	MOVQ  CX, BX
	SHRQ  $4, BX
	JZ    done
	XORQ  AX, AX

loop:
	MOVOU (SI)(AX*1), X0
	MOVOU (R8)(AX*1), X1
	MOVOU (R9)(AX*1), X2
	MOVOU (R10)(AX*1), X3
	MOVOU (R11)(AX*1), X4
	MOVOU (R12)(AX*1), X5
	MOVOU (R13)(AX*1), X6
	MOVOU (R14)(AX*1), X7

	// Interleave the rows as unshuffle8SSE2 does: word k gets byte k of
	// every row (byte b from row b).
	MOVO      X0, X8
	PUNPCKLBW X1, X0
	PUNPCKHBW X1, X8
	MOVO      X2, X9
	PUNPCKLBW X3, X2
	PUNPCKHBW X3, X9
	MOVO      X4, X10
	PUNPCKLBW X5, X4
	PUNPCKHBW X5, X10
	MOVO      X6, X11
	PUNPCKLBW X7, X6
	PUNPCKHBW X7, X11
	MOVO      X0, X1
	PUNPCKLWL X2, X0
	PUNPCKHWL X2, X1
	MOVO      X8, X3
	PUNPCKLWL X9, X8
	PUNPCKHWL X9, X3
	MOVO      X4, X5
	PUNPCKLWL X6, X4
	PUNPCKHWL X6, X5
	MOVO      X10, X7
	PUNPCKLWL X11, X10
	PUNPCKHWL X11, X7
	MOVO      X0, X2
	PUNPCKLLQ X4, X0
	PUNPCKHLQ X4, X2
	MOVO      X1, X6
	PUNPCKLLQ X5, X1
	PUNPCKHLQ X5, X6
	MOVO      X8, X9
	PUNPCKLLQ X10, X8
	PUNPCKHLQ X10, X9
	MOVO      X3, X11
	PUNPCKLLQ X7, X3
	PUNPCKHLQ X7, X11

	// Words 0-1 in X0, 2-3 X2, 4-5 X1, 6-7 X6, 8-9 X8, 10-11 X9,
	// 12-13 X3, 14-15 X11: transpose each and store.
	TRANS(X0)
	TRANS(X2)
	TRANS(X1)
	TRANS(X6)
	TRANS(X8)
	TRANS(X9)
	TRANS(X3)
	TRANS(X11)
	MOVOU X0, (DI)
	MOVOU X2, 16(DI)
	MOVOU X1, 32(DI)
	MOVOU X6, 48(DI)
	MOVOU X8, 64(DI)
	MOVOU X9, 80(DI)
	MOVOU X3, 96(DI)
	MOVOU X11, 112(DI)
	ADDQ  $16, AX
	ADDQ  $128, DI
	DECQ  BX
	JNZ   loop

done:
	RET
