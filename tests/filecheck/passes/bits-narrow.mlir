// Narrow and unsigned shifts and bitcasts on the CPU and PTX targets: ui8 shifts right
// logically, i64 amounts are masked to 63, and i16 <-> f16 reinterprets the f16 bits an f32
// register holds on PTX.
// RUN: opt-tool %s --emit llvm | filecheck %s --check-prefix=LLVM
// RUN: opt-tool %s --emit ptx | filecheck %s --check-prefix=PTX
// RUN: opt-tool %s --emit c | filecheck %s --check-prefix=C

// LLVM:  and i8 %{{.*}}, 7
// LLVM:  lshr i8
// LLVM:  and i64 %{{.*}}, 63
// LLVM:  shl i64
// LLVM:  bitcast i16 %{{.*}} to half

// PTX:   shr.u32
// PTX:   cvt.u32.u64
// PTX:   shl.b64
// PTX:   cvt.u16.u32 %h{{[0-9]+}}, %r{{[0-9]+}};
// PTX-NEXT: cvt.f32.f16

// C:     uint8_t v{{[0-9]+}} = (uint8_t)(v{{[0-9]+}} >> (v{{[0-9]+}} & 7));
// C:     int64_t v{{[0-9]+}} = (int64_t)((uint64_t)v{{[0-9]+}} << (v{{[0-9]+}} & 63));
// C:     _Float16 v{{[0-9]+}} = (union { int16_t s; _Float16 d; }){ .s = v{{[0-9]+}} }.d;

func.func @main(%u: tensor<4xui8>, %l: tensor<4xi64>, %s: tensor<4xi16>) -> (tensor<4xui8>, tensor<4xi64>, tensor<4xf16>) {
  %r = pg_tensor.binary shr %u, %u : tensor<4xui8>
  %w = pg_tensor.binary shl %l, %l : tensor<4xi64>
  %h = pg_tensor.bitcast %s : tensor<4xi16> to tensor<4xf16>
  func.return %r, %w, %h : tensor<4xui8>, tensor<4xi64>, tensor<4xf16>
}
