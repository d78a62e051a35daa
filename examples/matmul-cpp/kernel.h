// The block kernels of matmul-cpp, shared by its ucodes (ucodes.cpp) and by the sequential
// baseline of the benchmark (bench/programs/matmul_seq.cpp), so both run the same code.
#ifndef MATMUL_CPP_KERNEL_H
#define MATMUL_CPP_KERNEL_H

/** z += x * y for bs x bs row-major blocks (i-k-j order: the inner loop vectorises). */
inline void block_mul(int bs, const double *__restrict x, const double *__restrict y, double *__restrict z) {
  for (int i = 0; i < bs; i++) {
    double *zi = z + (long)i * bs;
    for (int k = 0; k < bs; k++) {
      const double xik = x[(long)i * bs + k];
      const double *yk = y + (long)k * bs;
      for (int j = 0; j < bs; j++) zi[j] += xik * yk[j];
    }
  }
}

/** s = x + y, element-wise over n doubles. */
inline void block_add(long n, const double *__restrict x, const double *__restrict y, double *__restrict s) {
  for (long i = 0; i < n; i++) s[i] = x[i] + y[i];
}

#endif
