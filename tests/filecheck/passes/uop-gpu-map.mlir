// uop-gpu-map: global ranges -> work groups x work items (flat id, recomputed indices,
// guards), long reductions of few outputs -> one work group each (strided partials, shared
// memory, barrier tree), within the target's limits.
// RUN: opt-tool %s -p 'uop-gpu-map{local-size=4 reduce-threshold=8}' | filecheck %s
// RUN: opt-tool %s -p 'uop-gpu-map{local-size=4 reduce-threshold=8}' | %roundtrip | filecheck %s
// RUN: opt-tool %s -p 'uop-gpu-map' | filecheck %s --check-prefix=DEFAULT
// RUN: opt-tool %s -p 'uop-gpu-map{target=wgsl local-size=1}' \
// RUN:   | filecheck %s --check-prefix=WIDE
// RUN: opt-tool %s -p 'uop-gpu-map{local-size=4 group-reduce=false}' \
// RUN:   | filecheck %s --check-prefix=SEQ
// RUN: opt-tool %s -p 'uop-gpu-map{local-size=3 reduce-threshold=8}' \
// RUN:   | filecheck %s --check-prefix=TREE3

// One nest of 8 on blocks of 4: two groups, no guard (the grid is exactly 8 work items);
// the range index becomes the flat id. With the default local size (256 on PTX) the block
// shrinks to the nest, and a one-group grid reads no group id.
// CHECK-LABEL: pg_uop.kernel @one_nest(
// CHECK-NEXT:    %[[G:.*]] = pg_uop.special group_id 0 size 2
// CHECK-NEXT:    %[[L:.*]] = pg_uop.special local_id 0 size 4
// CHECK-NEXT:    %[[C4:.*]] = pg_uop.const 4 : index
// CHECK-NEXT:    %[[B:.*]] = pg_uop.binary mul %[[G]], %[[C4]] : index
// CHECK-NEXT:    %[[F:.*]] = pg_uop.binary add %[[B]], %[[L]] : index
// CHECK-NEXT:    %[[V:.*]] = pg_uop.load %{{.*}}[%[[F]]]
// CHECK-NEXT:    pg_uop.store %[[V]], %{{.*}}[%[[F]]]
// CHECK-NEXT:  }
// DEFAULT-LABEL: pg_uop.kernel @one_nest(
// DEFAULT-NEXT:    %[[L:.*]] = pg_uop.special local_id 0 size 8
// DEFAULT-NEXT:    %[[V:.*]] = pg_uop.load %{{.*}}[%[[L]]]
// DEFAULT-NEXT:    pg_uop.store %[[V]], %{{.*}}[%[[L]]]
// DEFAULT-NEXT:  }
pg_uop.kernel @one_nest(%a: !pg.buffer<8xf32>, %out: !pg.buffer<8xf32>) {
  %i = pg_uop.range 0 to 8 global
  %v = pg_uop.load %a[%i] : !pg.buffer<8xf32> -> f32
  pg_uop.store %v, %out[%i] : f32, !pg.buffer<8xf32>
  pg_uop.end %i
}


// A 2x3 nest (the hoisted row offset sits between its ranges): 6 items on 2 groups of 4,
// so a guard; the indices come back as flat / 3 and flat % 3 and the ends go away.
// CHECK-LABEL: pg_uop.kernel @two_d(
// CHECK:         %[[C3:.*]] = pg_uop.const 3 : index
// CHECK:         %[[F:.*]] = pg_uop.binary add
// CHECK-NEXT:    %[[C6:.*]] = pg_uop.const 6 : index
// CHECK-NEXT:    %[[SEVEN:.*]] = pg_uop.const 7 : i32
// CHECK-NEXT:    %[[OK:.*]] = pg_uop.cmp lt %[[F]], %[[C6]] : index
// CHECK-NEXT:    pg_uop.if %[[OK]]
// CHECK-NEXT:    %[[J:.*]] = pg_uop.binary mod %[[F]], %[[C3]] : index
// CHECK-NEXT:    %[[I:.*]] = pg_uop.binary div %[[F]], %[[C3]] : index
// CHECK-NEXT:    %[[ROW:.*]] = pg_uop.binary mul %[[I]], %[[C3]] : index
// CHECK-NEXT:    %[[IDX:.*]] = pg_uop.binary add %[[ROW]], %[[J]] : index
// CHECK-NEXT:    pg_uop.store %[[SEVEN]], %{{.*}}[%[[IDX]]]
// CHECK-NEXT:    pg_uop.endif
// CHECK-NEXT:  }
// CHECK-NOT:     pg_uop.end 
pg_uop.kernel @two_d(%out: !pg.buffer<6xi32>) {
  %c7 = pg_uop.const 7 : i32
  %c3 = pg_uop.const 3 : index
  %i = pg_uop.range 0 to 2 global
  %row = pg_uop.binary mul %i, %c3 : index
  %j = pg_uop.range 0 to 3 global
  %idx = pg_uop.binary add %row, %j : index
  pg_uop.store %c7, %out[%idx] : i32, !pg.buffer<6xi32>
  pg_uop.end %j
  pg_uop.end %i
}


// Two nests share the specials (grid sized for the larger, 8); the smaller one, which
// starts at 1, is guarded and offset.
// CHECK-LABEL: pg_uop.kernel @two_nests(
// CHECK-NEXT:    pg_uop.special group_id 0 size 2
// CHECK-NEXT:    pg_uop.special local_id 0 size 4
// CHECK-NOT:     pg_uop.special
// CHECK:         %[[F:.*]] = pg_uop.binary add
// CHECK-NEXT:    %[[C3:.*]] = pg_uop.const 3 : index
// CHECK-NEXT:    %[[C1:.*]] = pg_uop.const 1 : index
// CHECK:         pg_uop.store %{{.*}}, %{{.*}}[%[[F]]] : f32, !pg.buffer<8xf32>
// CHECK-NEXT:    %[[OK:.*]] = pg_uop.cmp lt %[[F]], %[[C3]] : index
// CHECK-NEXT:    pg_uop.if %[[OK]]
// CHECK-NEXT:    %[[J:.*]] = pg_uop.binary add %[[F]], %[[C1]] : index
// CHECK:         pg_uop.store %{{.*}} : f32, !pg.buffer<3xf32>
// CHECK-NEXT:    pg_uop.endif
pg_uop.kernel @two_nests(%a: !pg.buffer<8xf32>, %b: !pg.buffer<3xf32>) {
  %one = pg_uop.const 1.0 : f32
  %i = pg_uop.range 0 to 8 global
  pg_uop.store %one, %a[%i] : f32, !pg.buffer<8xf32>
  pg_uop.end %i
  %j = pg_uop.range 1 to 4 global
  %c1 = pg_uop.const 1 : index
  %k = pg_uop.binary sub %j, %c1 : index
  pg_uop.store %one, %b[%k] : f32, !pg.buffer<3xf32>
  pg_uop.end %j
}


// More groups than one grid dimension holds (WGSL: 65535) go to two dimensions.
// WIDE-LABEL: pg_uop.kernel @big_grid(
// WIDE-NEXT:    %[[G0:.*]] = pg_uop.special group_id 0 size 50000
// WIDE-NEXT:    %[[G1:.*]] = pg_uop.special group_id 1 size 2
// WIDE-NEXT:    %[[N:.*]] = pg_uop.const 50000 : index
// WIDE-NEXT:    %[[H:.*]] = pg_uop.binary mul %[[G1]], %[[N]] : index
// WIDE-NEXT:    %[[F:.*]] = pg_uop.binary add %[[H]], %[[G0]] : index
// WIDE:         pg_uop.store %{{.*}}, %{{.*}}[%[[F]]]
// WIDE-NOT:     pg_uop.if
// WIDE:       }
pg_uop.kernel @big_grid(%out: !pg.buffer<100000xf32>) {
  %z = pg_uop.const 0.0 : f32
  %i = pg_uop.range 0 to 100000 global
  pg_uop.store %z, %out[%i] : f32, !pg.buffer<100000xf32>
  pg_uop.end %i
}


// A long reduction of one output: one work group; each thread sums a strided slice
// (1000 / 4 = 250 iterations), the partials meet in shared memory and a tree (strides 2,
// 1) combines them; local_id 0 stores. Without group-reduce the kernel stays as it is.
// CHECK-LABEL: pg_uop.kernel @group_sum(
// CHECK-NEXT:    %[[L:.*]] = pg_uop.special local_id 0 size 4
// CHECK-NEXT:    %[[C0:.*]] = pg_uop.const 0 : index
// CHECK-NEXT:    %[[C4:.*]] = pg_uop.const 4 : index
// CHECK-NEXT:    %[[SH:.*]] = pg_uop.shared : !pg.buffer<4xf32>
// CHECK-NEXT:    %[[C2:.*]] = pg_uop.const 2 : index
// CHECK-NEXT:    %[[C1:.*]] = pg_uop.const 1 : index
// CHECK-NEXT:    %[[ACC:.*]] = pg_uop.acc 0.0 : f32
// CHECK-NEXT:    %[[T:.*]] = pg_uop.range 0 to 250 reduce
// CHECK-NEXT:    %[[TL:.*]] = pg_uop.binary mul %[[T]], %[[C4]] : index
// CHECK-NEXT:    %[[R:.*]] = pg_uop.binary add %[[TL]], %[[L]] : index
// CHECK-NEXT:    pg_uop.load %{{.*}}[%[[R]]]
// CHECK:         pg_uop.end %[[T]]
// CHECK-NEXT:    %[[P:.*]] = pg_uop.acc_load %[[ACC]] : f32
// CHECK-NEXT:    pg_uop.store %[[P]], %[[SH]][%[[L]]]
// CHECK-NEXT:    pg_uop.barrier
// CHECK-NEXT:    %[[O:.*]] = pg_uop.binary add %[[L]], %[[C2]] : index
// CHECK-NEXT:    %[[A:.*]] = pg_uop.cmp lt %[[L]], %[[C2]] : index
// CHECK-NEXT:    pg_uop.if %[[A]]
// CHECK-NEXT:    %[[X:.*]] = pg_uop.load %[[SH]][%[[L]]]
// CHECK-NEXT:    %[[Y:.*]] = pg_uop.load %[[SH]][%[[O]]]
// CHECK-NEXT:    %[[S:.*]] = pg_uop.binary add %[[X]], %[[Y]] : f32
// CHECK-NEXT:    pg_uop.store %[[S]], %[[SH]][%[[L]]]
// CHECK-NEXT:    pg_uop.endif
// CHECK-NEXT:    pg_uop.barrier
// CHECK:         pg_uop.cmp lt %[[L]], %[[C1]] : index
// CHECK:         pg_uop.endif
// CHECK-NEXT:    %[[Z:.*]] = pg_uop.cmp eq %[[L]], %[[C0]] : index
// CHECK-NEXT:    pg_uop.if %[[Z]]
// CHECK-NEXT:    %[[TOT:.*]] = pg_uop.load %[[SH]][%[[C0]]]
// CHECK-NEXT:    pg_uop.acc_store %[[ACC]], %[[TOT]] : f32
// CHECK-NEXT:    %[[RES:.*]] = pg_uop.acc_load %[[ACC]] : f32
// CHECK-NEXT:    pg_uop.store %[[RES]], %{{.*}}[%[[C0]]]
// CHECK-NEXT:    pg_uop.endif
// CHECK-NEXT:  }
// SEQ-LABEL: pg_uop.kernel @group_sum(
// SEQ-NOT:     pg_uop.special
// SEQ:         pg_uop.range 0 to 1000 reduce
pg_uop.kernel @group_sum(%a: !pg.buffer<1000xf32>, %out: !pg.buffer<1xf32>) {
  %c0 = pg_uop.const 0 : index
  %acc = pg_uop.acc 0.0 : f32
  %r = pg_uop.range 0 to 1000 reduce
  %v = pg_uop.load %a[%r] : !pg.buffer<1000xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %r
  %s = pg_uop.acc_load %acc : f32
  pg_uop.store %s, %out[%c0] : f32, !pg.buffer<1xf32>
}


// Few outputs, long rows: one work group per output (group id = row), max-combined.
// Without group-reduce: one work item per row, the reduction stays sequential.
// CHECK-LABEL: pg_uop.kernel @row_max(
// CHECK-NEXT:    %[[G:.*]] = pg_uop.special group_id 0 size 4
// CHECK-NEXT:    pg_uop.special local_id 0 size 4
// CHECK:         pg_uop.shared : !pg.buffer<4xi32>
// CHECK:         pg_uop.binary mul %[[G]], %{{.*}} : index
// CHECK-NEXT:    pg_uop.range 0 to 75 reduce
// CHECK:         pg_uop.binary max %{{.*}}, %{{.*}} : i32
// CHECK:         pg_uop.store %{{.*}}, %{{.*}}[%[[G]]] : i32, !pg.buffer<4xi32>
// CHECK-NEXT:    pg_uop.endif
// SEQ-LABEL: pg_uop.kernel @row_max(
// SEQ-NEXT:    %[[L:.*]] = pg_uop.special local_id 0 size 4
// SEQ-NOT:     pg_uop.shared
// SEQ:         pg_uop.range 0 to 300 reduce
pg_uop.kernel @row_max(%a: !pg.buffer<1200xi32>, %out: !pg.buffer<4xi32>) {
  %c300 = pg_uop.const 300 : index
  %i = pg_uop.range 0 to 4 global
  %acc = pg_uop.acc -2147483648 : i32
  %base = pg_uop.binary mul %i, %c300 : index
  %r = pg_uop.range 0 to 300 reduce
  %idx = pg_uop.binary add %base, %r : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<1200xi32> -> i32
  %old = pg_uop.acc_load %acc : i32
  %new = pg_uop.binary max %old, %v : i32
  pg_uop.acc_store %acc, %new : i32
  pg_uop.end %r
  %m = pg_uop.acc_load %acc : i32
  pg_uop.store %m, %out[%i] : i32, !pg.buffer<4xi32>
  pg_uop.end %i
}


// 10 iterations on 3 threads: 4 strided steps, the ones past the end skipped (the
// register keeps the identity); the tree over 3 partials checks that the partner exists.
// TREE3-LABEL: pg_uop.kernel @ragged_sum(
// TREE3-NEXT:    %[[L:.*]] = pg_uop.special local_id 0 size 3
// TREE3:         %[[C3:.*]] = pg_uop.const 3 : index
// TREE3-NEXT:    %[[C10:.*]] = pg_uop.const 10 : index
// TREE3:         %[[T:.*]] = pg_uop.range 0 to 4 reduce
// TREE3-NEXT:    %[[TL:.*]] = pg_uop.binary mul %[[T]], %[[C3]] : index
// TREE3-NEXT:    %[[R:.*]] = pg_uop.binary add %[[TL]], %[[L]] : index
// TREE3-NEXT:    %[[IN:.*]] = pg_uop.cmp lt %[[R]], %[[C10]] : index
// TREE3-NEXT:    pg_uop.if %[[IN]]
// TREE3:         pg_uop.acc_store
// TREE3-NEXT:    pg_uop.endif
// TREE3-NEXT:    pg_uop.end %[[T]]
// TREE3:         pg_uop.barrier
// TREE3-NEXT:    %[[O:.*]] = pg_uop.binary add %[[L]], %{{.*}} : index
// TREE3-NEXT:    %[[A:.*]] = pg_uop.cmp lt %[[L]], %{{.*}} : index
// TREE3-NEXT:    %[[B:.*]] = pg_uop.cmp lt %[[O]], %[[C3]] : index
// TREE3-NEXT:    %[[AB:.*]] = pg_uop.binary and %[[A]], %[[B]] : i1
// TREE3-NEXT:    pg_uop.if %[[AB]]
pg_uop.kernel @ragged_sum(%a: !pg.buffer<10xi32>, %out: !pg.buffer<1xi32>) {
  %c0 = pg_uop.const 0 : index
  %acc = pg_uop.acc 0 : i32
  %r = pg_uop.range 0 to 10 reduce
  %v = pg_uop.load %a[%r] : !pg.buffer<10xi32> -> i32
  %old = pg_uop.acc_load %acc : i32
  %new = pg_uop.binary add %v, %old : i32
  pg_uop.acc_store %acc, %new : i32
  pg_uop.end %r
  %s = pg_uop.acc_load %acc : i32
  pg_uop.store %s, %out[%c0] : i32, !pg.buffer<1xi32>
}


// CSE made the second nest use a constant defined inside the first: it is hoisted out of
// the first nest, before its guard.
// CHECK-LABEL: pg_uop.kernel @cse_const(
// CHECK:         %[[TWO:.*]] = pg_uop.const 2.0 : f32
// CHECK-NEXT:    %[[OK:.*]] = pg_uop.cmp lt
// CHECK-NEXT:    pg_uop.if %[[OK]]
// CHECK-NEXT:    pg_uop.store %[[TWO]], %{{.*}} : f32, !pg.buffer<6xf32>
// CHECK-NEXT:    pg_uop.endif
// CHECK-NEXT:    %[[OK2:.*]] = pg_uop.cmp lt
// CHECK-NEXT:    pg_uop.if %[[OK2]]
// CHECK-NEXT:    pg_uop.store %[[TWO]], %{{.*}} : f32, !pg.buffer<3xf32>
// CHECK-NEXT:    pg_uop.endif
pg_uop.kernel @cse_const(%a: !pg.buffer<6xf32>, %b: !pg.buffer<3xf32>) {
  %i = pg_uop.range 0 to 6 global
  %two = pg_uop.const 2.0 : f32
  pg_uop.store %two, %a[%i] : f32, !pg.buffer<6xf32>
  pg_uop.end %i
  %j = pg_uop.range 0 to 3 global
  pg_uop.store %two, %b[%j] : f32, !pg.buffer<3xf32>
  pg_uop.end %j
}


// No global range, no long reduction: one work item, the kernel is left as it is.
// CHECK-LABEL: pg_uop.kernel @scalar(
// CHECK-NEXT:    pg_uop.const 0 : index
// CHECK-NEXT:    pg_uop.load
// CHECK-NEXT:    pg_uop.store
// CHECK-NEXT:  }
pg_uop.kernel @scalar(%a: !pg.buffer<1xf32>, %out: !pg.buffer<1xf32>) {
  %c0 = pg_uop.const 0 : index
  %v = pg_uop.load %a[%c0] : !pg.buffer<1xf32> -> f32
  pg_uop.store %v, %out[%c0] : f32, !pg.buffer<1xf32>
}


// A fused row kernel (a row sum, then the loop that divides the row by it): after the last
// group reduction every thread reads the total back (a barrier after the last tree step,
// no `local_id == 0` guard) and the independent column loop is spread over the group:
// columns lid, lid + 4, lid + 8, the ragged end guarded. Without group-reduce both loops
// stay sequential in the row's work item.
// CHECK-LABEL: pg_uop.kernel @row_epilogue(
// CHECK-NEXT:    %[[G:.*]] = pg_uop.special group_id 0 size 3
// CHECK-NEXT:    %[[L:.*]] = pg_uop.special local_id 0 size 4
// CHECK-NEXT:    %[[C10:.*]] = pg_uop.const 10 : index
// CHECK-NEXT:    %[[C4:.*]] = pg_uop.const 4 : index
// CHECK-NEXT:    %[[SH:.*]] = pg_uop.shared : !pg.buffer<4xf32>
// CHECK-NEXT:    pg_uop.const 2 : index
// CHECK-NEXT:    %[[C1:.*]] = pg_uop.const 1 : index
// CHECK-NEXT:    %[[C0:.*]] = pg_uop.const 0 : index
// CHECK-NEXT:    %[[BASE:.*]] = pg_uop.binary mul %[[G]], %[[C10]] : index
// CHECK-NEXT:    %[[ACC:.*]] = pg_uop.acc 0.0 : f32
// CHECK-NEXT:    pg_uop.range 0 to 3 reduce
// CHECK:         pg_uop.cmp lt %[[L]], %[[C1]] : index
// CHECK:         pg_uop.endif
// CHECK-NEXT:    pg_uop.barrier
// CHECK-NEXT:    %[[TOT:.*]] = pg_uop.load %[[SH]][%[[C0]]]
// CHECK-NEXT:    pg_uop.acc_store %[[ACC]], %[[TOT]] : f32
// CHECK-NEXT:    %[[S:.*]] = pg_uop.acc_load %[[ACC]] : f32
// CHECK-NEXT:    %[[T:.*]] = pg_uop.range 0 to 3 loop
// CHECK-NEXT:    %[[TL:.*]] = pg_uop.binary mul %[[T]], %[[C4]] : index
// CHECK-NEXT:    %[[J:.*]] = pg_uop.binary add %[[TL]], %[[L]] : index
// CHECK-NEXT:    %[[OK:.*]] = pg_uop.cmp lt %[[J]], %[[C10]] : index
// CHECK-NEXT:    pg_uop.if %[[OK]]
// CHECK-NEXT:    %[[AT:.*]] = pg_uop.binary add %[[BASE]], %[[J]] : index
// CHECK-NEXT:    %[[W:.*]] = pg_uop.load %{{.*}}[%[[AT]]]
// CHECK-NEXT:    %[[Y:.*]] = pg_uop.binary div %[[W]], %[[S]] : f32
// CHECK-NEXT:    pg_uop.store %[[Y]], %{{.*}}[%[[AT]]]
// CHECK-NEXT:    pg_uop.endif
// CHECK-NEXT:    pg_uop.end %[[T]]
// CHECK-NEXT:  }
// SEQ-LABEL: pg_uop.kernel @row_epilogue(
// SEQ-NOT:     pg_uop.shared
// SEQ:         pg_uop.range 0 to 10 reduce
// SEQ:         pg_uop.range 0 to 10 loop
pg_uop.kernel @row_epilogue(%a: !pg.buffer<30xf32>, %out: !pg.buffer<30xf32>) {
  %c10 = pg_uop.const 10 : index
  %i = pg_uop.range 0 to 3 global
  %base = pg_uop.binary mul %i, %c10 : index
  %acc = pg_uop.acc 0.0 : f32
  %r = pg_uop.range 0 to 10 reduce
  %idx = pg_uop.binary add %base, %r : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<30xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %r
  %s = pg_uop.acc_load %acc : f32
  %j = pg_uop.range 0 to 10 global
  %at = pg_uop.binary add %base, %j : index
  %w = pg_uop.load %a[%at] : !pg.buffer<30xf32> -> f32
  %y = pg_uop.binary div %w, %s : f32
  pg_uop.store %y, %out[%at] : f32, !pg.buffer<30xf32>
  pg_uop.end %j
  pg_uop.end %i
}
