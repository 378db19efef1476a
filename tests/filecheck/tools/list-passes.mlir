// --list-passes: picograd's passes with the first line of their docstring, then xDSL's.
// RUN: opt-tool --list-passes | filecheck %s

// CHECK:      picograd passes:
// CHECK-NEXT:   tensor-simplify          {{[A-Za-z`].+}}
// CHECK-NEXT:   matmul-layout            {{[A-Za-z`].+}}
// CHECK-NEXT:   tensor-split-reduce      {{[A-Za-z`].+}}
// CHECK-NEXT:   tensor-legalize-bf16     {{[A-Za-z`].+}}
// CHECK-NEXT:   convert-tensor-to-sched  {{[A-Za-z`].+}}
// CHECK-NEXT:   sched-dedup              {{[A-Za-z`].+}}
// CHECK-NEXT:   convert-sched-to-loop    {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-simplify            {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-upcast              {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-split               {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-split-reduce        {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-block-reduce        {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-chunk-reduce        {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-stash               {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-collapse            {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-unflatten           {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-interchange         {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-schedule            {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-optimize            {{[A-Za-z`].+}}
// CHECK-NEXT:   loop-unswitch            {{[A-Za-z`].+}}
// CHECK-NEXT:   convert-loop-to-uop      {{[A-Za-z`].+}}
// CHECK-NEXT:   uop-simplify             {{[A-Za-z`].+}}
// CHECK-NEXT:   uop-contract             {{[A-Za-z`].+}}
// CHECK-NEXT:   convert-uop-to-llvm      {{[A-Za-z`].+}}
// CHECK-NEXT:   convert-uop-to-c         {{[A-Za-z`].+}}
// CHECK-NEXT:   uop-gpu-map              {{[A-Za-z`].+}}
// CHECK-NEXT:   uop-legalize             {{[A-Za-z`].+}}
// CHECK-NEXT:   convert-uop-to-ptx       {{[A-Za-z`].+}}
// CHECK-NEXT:   convert-uop-to-wgsl      {{[A-Za-z`].+}}
// CHECK-NEXT: xDSL passes:
// CHECK:        canonicalize
// CHECK:        cse
// CHECK-NOT:    tensor-simplify
