//go:build amd64 && !purego

#include "textflag.h"

// func unshuffle2SSE2(dst *byte, streams *[2]*byte, n int)
// Interleaves the first n&^15 bytes of the two streams into dst: 16
// elements per iteration.
TEXT ·unshuffle2SSE2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ streams+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ 0(DX), SI
	MOVQ 8(DX), R8
	MOVQ CX, BX
	SHRQ $4, BX
	JZ   done2
	XORQ AX, AX

loop2:
	MOVOU     (SI)(AX*1), X0
	MOVOU     (R8)(AX*1), X1
	MOVO      X0, X2
	PUNPCKLBW X1, X0
	PUNPCKHBW X1, X2
	MOVOU     X0, (DI)
	MOVOU     X2, 16(DI)
	ADDQ      $16, AX
	ADDQ      $32, DI
	DECQ      BX
	JNZ       loop2

done2:
	RET

// func unshuffle4SSE2(dst *byte, streams *[4]*byte, n int)
// Interleaves the first n&^15 bytes of the four streams into dst: 16
// elements per iteration.
TEXT ·unshuffle4SSE2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ streams+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ 0(DX), SI
	MOVQ 8(DX), R8
	MOVQ 16(DX), R9
	MOVQ 24(DX), R10
	MOVQ CX, BX
	SHRQ $4, BX
	JZ   done4
	XORQ AX, AX

loop4:
	MOVOU     (SI)(AX*1), X0
	MOVOU     (R8)(AX*1), X1
	MOVOU     (R9)(AX*1), X2
	MOVOU     (R10)(AX*1), X3
	MOVO      X0, X4
	PUNPCKLBW X1, X0 // bytes 0,1 of elements 0-7
	PUNPCKHBW X1, X4 // of elements 8-15
	MOVO      X2, X5
	PUNPCKLBW X3, X2 // bytes 2,3 of elements 0-7
	PUNPCKHBW X3, X5 // of elements 8-15
	MOVO      X0, X6
	PUNPCKLWL X2, X0 // elements 0-3
	PUNPCKHWL X2, X6 // elements 4-7
	MOVO      X4, X7
	PUNPCKLWL X5, X4 // elements 8-11
	PUNPCKHWL X5, X7 // elements 12-15
	MOVOU     X0, (DI)
	MOVOU     X6, 16(DI)
	MOVOU     X4, 32(DI)
	MOVOU     X7, 48(DI)
	ADDQ      $16, AX
	ADDQ      $64, DI
	DECQ      BX
	JNZ       loop4

done4:
	RET

// func unshuffle8SSE2(dst *byte, streams *[8]*byte, n int)
// Interleaves the first n&^15 bytes of the eight streams into dst: 16
// elements per iteration.
TEXT ·unshuffle8SSE2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ streams+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ 0(DX), SI
	MOVQ 8(DX), R8
	MOVQ 16(DX), R9
	MOVQ 24(DX), R10
	MOVQ 32(DX), R11
	MOVQ 40(DX), R12
	MOVQ 48(DX), R13
	MOVQ 56(DX), R14
	MOVQ CX, BX
	SHRQ $4, BX
	JZ   done8
	XORQ AX, AX

loop8:
	MOVOU (SI)(AX*1), X0
	MOVOU (R8)(AX*1), X1
	MOVOU (R9)(AX*1), X2
	MOVOU (R10)(AX*1), X3
	MOVOU (R11)(AX*1), X4
	MOVOU (R12)(AX*1), X5
	MOVOU (R13)(AX*1), X6
	MOVOU (R14)(AX*1), X7

	// Bytes: pairs (0,1), (2,3), (4,5), (6,7) of elements 0-7 and 8-15.
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

	// Words: bytes 0-3 (X0, X1, X8, X3) and 4-7 (X4, X5, X10, X7) of
	// elements 0-3, 4-7, 8-11, 12-15.
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

	// Doublewords: whole elements, two per register.
	MOVO      X0, X2
	PUNPCKLLQ X4, X0  // elements 0, 1
	PUNPCKHLQ X4, X2  // 2, 3
	MOVO      X1, X6
	PUNPCKLLQ X5, X1  // 4, 5
	PUNPCKHLQ X5, X6  // 6, 7
	MOVO      X8, X9
	PUNPCKLLQ X10, X8 // 8, 9
	PUNPCKHLQ X10, X9 // 10, 11
	MOVO      X3, X11
	PUNPCKLLQ X7, X3  // 12, 13
	PUNPCKHLQ X7, X11 // 14, 15

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
	JNZ   loop8

done8:
	RET
