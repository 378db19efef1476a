// uop-legalize rewrites what a target's capability table lacks, or fails naming the kernel,
// the op or dtype and the target. PTX has exp2/log2/sin on f32 and sqrt on f32/f64 only;
// WGSL has every function on f32 but only the f32, i32 and i1 dtypes (it emulates f16, i8, ui8
// and i16 in f32 / i32, the others it rejects) and 8 buffers; the
// CPU tables have everything, so there the pass changes nothing.
// RUN: not opt-tool %s --split-input-file -p 'uop-legalize{target=ptx}' 2>&1 | filecheck %s --check-prefix=PTX
// RUN: not opt-tool %s --split-input-file -p 'uop-legalize{target=wgsl}' 2>&1 | filecheck %s --check-prefix=WGSL
// RUN: opt-tool %s --split-input-file -p 'uop-legalize{target=llvm}' 2>&1 | filecheck %s --check-prefix=CPU
// RUN: opt-tool %s --split-input-file -p 'uop-legalize{target=c}' 2>&1 | filecheck %s --check-prefix=CPU

// exp x -> exp2(x * log2(e)) and log x -> log2(x) * ln(2) where the target lacks exp/log.
// PTX-LABEL:  pg_uop.kernel @exp_log(
// PTX:          %[[X:.*]] = pg_uop.load
// PTX-NEXT:     %[[L2E:.*]] = pg_uop.const 1.4426950216293335 : f32
// PTX-NEXT:     %[[S:.*]] = pg_uop.binary mul %[[X]], %[[L2E]] : f32
// PTX-NEXT:     %[[E:.*]] = pg_uop.unary exp2 %[[S]] : f32
// PTX-NEXT:     %[[L:.*]] = pg_uop.unary log2 %[[E]] : f32
// PTX-NEXT:     %[[LN2:.*]] = pg_uop.const 0.6931471824645996 : f32
// PTX-NEXT:     %[[R:.*]] = pg_uop.binary mul %[[L]], %[[LN2]] : f32
// PTX-NEXT:     %[[Q:.*]] = pg_uop.unary sqrt %[[R]] : f32
// PTX-NEXT:     %[[N:.*]] = pg_uop.unary sin %[[Q]] : f32
// PTX-NEXT:     pg_uop.store %[[N]]
// WGSL-LABEL: pg_uop.kernel @exp_log(
// WGSL:         pg_uop.unary exp %{{.*}} : f32
// WGSL-NEXT:    pg_uop.unary log %{{.*}} : f32
// WGSL-NEXT:    pg_uop.unary sqrt %{{.*}} : f32
// WGSL-NEXT:    pg_uop.unary sin %{{.*}} : f32
// WGSL-NEXT:    pg_uop.store
// CPU-LABEL:  pg_uop.kernel @exp_log(
// CPU:          pg_uop.unary exp %{{.*}} : f32
// CPU-NEXT:     pg_uop.unary log %{{.*}} : f32
// CPU-NEXT:     pg_uop.unary sqrt %{{.*}} : f32
// CPU-NEXT:     pg_uop.unary sin %{{.*}} : f32
// CPU-NEXT:     pg_uop.store
pg_uop.kernel @exp_log(%a: !pg.buffer<16xf32>, %out: !pg.buffer<16xf32>) {
  %i = pg_uop.range 0 to 16 global
  %x = pg_uop.load %a[%i] : !pg.buffer<16xf32> -> f32
  %e = pg_uop.unary exp %x : f32
  %l = pg_uop.unary log %e : f32
  %q = pg_uop.unary sqrt %l : f32
  %n = pg_uop.unary sin %q : f32
  pg_uop.store %n, %out[%i] : f32, !pg.buffer<16xf32>
  pg_uop.end %i
}

// -----
// f16 math the table lacks is computed in f32 and rounded back, one function at a time
// (exp's f32 form is then rewritten to exp2 as above). WGSL emulates f16: every op, neg
// included, is computed in f32 and rounded back.
// PTX-LABEL:  pg_uop.kernel @half(
// PTX:          %[[H:.*]] = pg_uop.load %{{.*}} -> f16
// PTX-NEXT:     %[[HX:.*]] = pg_uop.cast %[[H]] : f16 to f32
// PTX-NEXT:     %[[C:.*]] = pg_uop.const 1.4426950216293335 : f32
// PTX-NEXT:     %[[M:.*]] = pg_uop.binary mul %[[HX]], %[[C]] : f32
// PTX-NEXT:     %[[E:.*]] = pg_uop.unary exp2 %[[M]] : f32
// PTX-NEXT:     %[[EH:.*]] = pg_uop.cast %[[E]] : f32 to f16
// PTX-NEXT:     %[[EX:.*]] = pg_uop.cast %[[EH]] : f16 to f32
// PTX-NEXT:     %[[Q:.*]] = pg_uop.unary sqrt %[[EX]] : f32
// PTX-NEXT:     %[[QH:.*]] = pg_uop.cast %[[Q]] : f32 to f16
// PTX-NEXT:     %[[QX:.*]] = pg_uop.cast %[[QH]] : f16 to f32
// PTX-NEXT:     %[[L:.*]] = pg_uop.unary log2 %[[QX]] : f32
// PTX-NEXT:     %[[LH:.*]] = pg_uop.cast %[[L]] : f32 to f16
// PTX-NEXT:     %[[NEG:.*]] = pg_uop.unary neg %[[LH]] : f16
// PTX-NEXT:     pg_uop.store %[[NEG]], %{{.*}} : f16
// WGSL-LABEL: pg_uop.kernel @half(
// WGSL:         %[[H:.*]] = pg_uop.load %{{.*}} -> f16
// WGSL-NEXT:    %[[HX:.*]] = pg_uop.cast %[[H]] : f16 to f32
// WGSL-NEXT:    %[[E:.*]] = pg_uop.unary exp %[[HX]] : f32
// WGSL-NEXT:    %[[EH:.*]] = pg_uop.cast %[[E]] : f32 to f16
// WGSL-NEXT:    %[[EX:.*]] = pg_uop.cast %[[EH]] : f16 to f32
// WGSL-NEXT:    %[[Q:.*]] = pg_uop.unary sqrt %[[EX]] : f32
// WGSL-NEXT:    %[[QH:.*]] = pg_uop.cast %[[Q]] : f32 to f16
// WGSL-NEXT:    %[[QX:.*]] = pg_uop.cast %[[QH]] : f16 to f32
// WGSL-NEXT:    %[[L:.*]] = pg_uop.unary log2 %[[QX]] : f32
// WGSL-NEXT:    %[[LH:.*]] = pg_uop.cast %[[L]] : f32 to f16
// WGSL-NEXT:    %[[LX:.*]] = pg_uop.cast %[[LH]] : f16 to f32
// WGSL-NEXT:    %[[NEG:.*]] = pg_uop.unary neg %[[LX]] : f32
// WGSL-NEXT:    %[[NH:.*]] = pg_uop.cast %[[NEG]] : f32 to f16
// WGSL-NEXT:    pg_uop.store %[[NH]], %{{.*}} : f16
// CPU-LABEL:  pg_uop.kernel @half(
// CPU:          pg_uop.unary exp %{{.*}} : f16
// CPU-NEXT:     pg_uop.unary sqrt %{{.*}} : f16
// CPU-NEXT:     pg_uop.unary log2 %{{.*}} : f16
pg_uop.kernel @half(%h: !pg.buffer<8xf16>) {
  %i = pg_uop.range 0 to 8 global
  %x = pg_uop.load %h[%i] : !pg.buffer<8xf16> -> f16
  %e = pg_uop.unary exp %x : f16
  %q = pg_uop.unary sqrt %e : f16
  %l = pg_uop.unary log2 %q : f16
  %n = pg_uop.unary neg %l : f16
  pg_uop.store %n, %h[%i] : f16, !pg.buffer<8xf16>
  pg_uop.end %i
}

// -----
// WGSL computes narrow integer ops in i32 and casts back (the cast wraps); a shift amount is
// first taken modulo the narrow width, as the op defines it. Comparisons, where and casts
// stay narrow. PTX and the CPU have these types.
// WGSL-LABEL: pg_uop.kernel @narrow_ints(
// WGSL:         %[[X:.*]] = pg_uop.load %{{.*}} -> i8
// WGSL-NEXT:    %[[A:.*]] = pg_uop.cast %[[X]] : i8 to i32
// WGSL-NEXT:    %[[B:.*]] = pg_uop.cast %[[X]] : i8 to i32
// WGSL-NEXT:    %[[S:.*]] = pg_uop.binary add %[[A]], %[[B]] : i32
// WGSL-NEXT:    %[[SN:.*]] = pg_uop.cast %[[S]] : i32 to i8
// WGSL-NEXT:    %[[V:.*]] = pg_uop.cast %[[SN]] : i8 to i32
// WGSL-NEXT:    %[[AMT:.*]] = pg_uop.cast %[[X]] : i8 to i32
// WGSL-NEXT:    %[[SEVEN:.*]] = pg_uop.const 7 : i32
// WGSL-NEXT:    %[[MOD:.*]] = pg_uop.binary and %[[AMT]], %[[SEVEN]] : i32
// WGSL-NEXT:    %[[SH:.*]] = pg_uop.binary shl %[[V]], %[[MOD]] : i32
// WGSL-NEXT:    %[[SHN:.*]] = pg_uop.cast %[[SH]] : i32 to i8
// WGSL-NEXT:    %[[C:.*]] = pg_uop.cmp lt %[[SHN]], %[[X]] : i8
// WGSL-NEXT:    %[[W:.*]] = pg_uop.where %[[C]], %[[SHN]], %[[X]] : i8
// WGSL-NEXT:    %[[U:.*]] = pg_uop.cast %[[W]] : i8 to ui8
// WGSL-NEXT:    %[[UX:.*]] = pg_uop.cast %[[U]] : ui8 to i32
// WGSL-NEXT:    %[[NU:.*]] = pg_uop.unary neg %[[UX]] : i32
// WGSL-NEXT:    %[[NUN:.*]] = pg_uop.cast %[[NU]] : i32 to ui8
// WGSL-NEXT:    pg_uop.store %[[NUN]], %{{.*}} : ui8
// PTX-LABEL:  pg_uop.kernel @narrow_ints(
// PTX:          pg_uop.binary add %{{.*}} : i8
// PTX-NEXT:     pg_uop.binary shl %{{.*}} : i8
// CPU-LABEL:  pg_uop.kernel @narrow_ints(
// CPU:          pg_uop.binary add %{{.*}} : i8
pg_uop.kernel @narrow_ints(%a: !pg.buffer<4xi8>, %out: !pg.buffer<4xui8>) {
  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4xi8> -> i8
  %s = pg_uop.binary add %x, %x : i8
  %t = pg_uop.binary shl %s, %x : i8
  %c = pg_uop.cmp lt %t, %x : i8
  %w = pg_uop.where %c, %t, %x : i8
  %u = pg_uop.cast %w : i8 to ui8
  %n = pg_uop.unary neg %u : ui8
  pg_uop.store %n, %out[%i] : ui8, !pg.buffer<4xui8>
  pg_uop.end %i
}

// -----
// PTX has a correctly rounded f64 sqrt; WGSL has no f64.
// PTX-LABEL:  pg_uop.kernel @f64_sqrt(
// PTX:          pg_uop.unary sqrt %{{.*}} : f64
// WGSL: error: pass 'uop-legalize' failed: uop-legalize{target=wgsl}: @f64_sqrt: f64 is not supported by WGSL (it has f32, i1, i32; emulates f16, i8, ui8, i16); argument 0 has type !pg.buffer<4xf64>
// CPU-LABEL:  pg_uop.kernel @f64_sqrt(
// CPU:          pg_uop.unary sqrt %{{.*}} : f64
pg_uop.kernel @f64_sqrt(%a: !pg.buffer<4xf64>) {
  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4xf64> -> f64
  %q = pg_uop.unary sqrt %x : f64
  pg_uop.store %q, %a[%i] : f64, !pg.buffer<4xf64>
  pg_uop.end %i
}

// -----
// No f64 exp on PTX and no rule to get one.
// PTX: error: pass 'uop-legalize' failed: uop-legalize{target=ptx}: @f64_exp: 'pg_uop.unary exp' on f64 is not supported by PTX (its f64 math: sqrt)
// WGSL: error: pass 'uop-legalize' failed: uop-legalize{target=wgsl}: @f64_exp: f64 is not supported
// CPU-LABEL:  pg_uop.kernel @f64_exp(
// CPU:          pg_uop.unary exp %{{.*}} : f64
pg_uop.kernel @f64_exp(%a: !pg.buffer<4xf64>) {
  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4xf64> -> f64
  %e = pg_uop.unary exp %x : f64
  pg_uop.store %e, %a[%i] : f64, !pg.buffer<4xf64>
  pg_uop.end %i
}

// -----
// A dtype an op makes, not only a buffer's: WGSL has no 64-bit integers.
// PTX-LABEL:  pg_uop.kernel @i64_result(
// PTX:          pg_uop.cast %{{.*}} : f32 to i64
// WGSL: error: pass 'uop-legalize' failed: uop-legalize{target=wgsl}: @i64_result: i64 is not supported by WGSL (it has f32, i1, i32; emulates f16, i8, ui8, i16); 'pg_uop.cast' has result type i64
pg_uop.kernel @i64_result(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xi32>) {
  %i = pg_uop.range 0 to 4 global
  %x = pg_uop.load %a[%i] : !pg.buffer<4xf32> -> f32
  %w = pg_uop.cast %x : f32 to i64
  %n = pg_uop.cast %w : i64 to i32
  pg_uop.store %n, %out[%i] : i32, !pg.buffer<4xi32>
  pg_uop.end %i
}

// -----
// WGSL binds at most 8 storage buffers per kernel; PTX and the CPU have no such limit.
// PTX-LABEL:  pg_uop.kernel @many_buffers(
// WGSL: error: pass 'uop-legalize' failed: uop-legalize{target=wgsl}: @many_buffers: 9 buffer arguments, but WGSL binds at most 8 per kernel
// CPU-LABEL:  pg_uop.kernel @many_buffers(
pg_uop.kernel @many_buffers(%a0: !pg.buffer<1xf32>, %a1: !pg.buffer<1xf32>,
    %a2: !pg.buffer<1xf32>, %a3: !pg.buffer<1xf32>, %a4: !pg.buffer<1xf32>,
    %a5: !pg.buffer<1xf32>, %a6: !pg.buffer<1xf32>, %a7: !pg.buffer<1xf32>,
    %out: !pg.buffer<1xf32>) {
  %c0 = pg_uop.const 0 : index
  %x = pg_uop.load %a0[%c0] : !pg.buffer<1xf32> -> f32
  pg_uop.store %x, %out[%c0] : f32, !pg.buffer<1xf32>
}

// -----
// GPU form: math under a guard and inside a reduce loop is rewritten in place; registers,
// shared memory and index arithmetic (a 32-bit div by a power of two included) are left
// alone.
// PTX-LABEL:  pg_uop.kernel @gpu_form(
// PTX:          %[[G:.*]] = pg_uop.special group_id 0 size 4
// PTX:          pg_uop.shared : !pg.buffer<64xf32>
// PTX:          pg_uop.binary div %{{.*}}, %{{.*}} : index
// PTX:          pg_uop.if
// PTX:          pg_uop.range 0 to 8 reduce
// PTX:          pg_uop.unary exp2
// PTX:          pg_uop.acc_store
// PTX-NEXT:     pg_uop.end
// PTX:          pg_uop.unary log2
// PTX:          pg_uop.endif
// WGSL-LABEL: pg_uop.kernel @gpu_form(
// WGSL:         pg_uop.unary exp
// WGSL:         pg_uop.unary log
pg_uop.kernel @gpu_form(%a: !pg.buffer<256xf32>, %out: !pg.buffer<256xf32>) {
  %g = pg_uop.special group_id 0 size 4
  %l = pg_uop.special local_id 0 size 64
  %s = pg_uop.shared : !pg.buffer<64xf32>
  %c64 = pg_uop.const 64 : index
  %c2 = pg_uop.const 2 : index
  %base = pg_uop.binary mul %g, %c64 : index
  %gid = pg_uop.binary add %base, %l : index
  %half = pg_uop.binary div %gid, %c2 : index
  %n = pg_uop.const 200 : index
  %ok = pg_uop.cmp lt %gid, %n : index
  pg_uop.if %ok
  %acc = pg_uop.acc 0.0 : f32
  %j = pg_uop.range 0 to 8 reduce
  %x = pg_uop.load %a[%half] : !pg.buffer<256xf32> -> f32
  %e = pg_uop.unary exp %x : f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %e : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %j
  %sum = pg_uop.acc_load %acc : f32
  %ln = pg_uop.unary log %sum : f32
  pg_uop.store %ln, %s[%l] : f32, !pg.buffer<64xf32>
  pg_uop.barrier
  %y = pg_uop.load %s[%l] : !pg.buffer<64xf32> -> f32
  pg_uop.store %y, %out[%gid] : f32, !pg.buffer<256xf32>
  pg_uop.endif
}
