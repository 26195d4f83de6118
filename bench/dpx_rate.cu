/*
 * dpx_rate.cu - throughput of the instructions the DPX kernel is made of
 * (built by scripts/gpu-check with nvcc, not by the Makefile).  Each thread
 * runs 8 independent chains of one operation; prints warp instructions per
 * clock per SM, and for mixes whether two operations share a pipe.
 */
#include <cstdio>
#include <cuda_runtime.h>

#define N 4096

template <int OP>
__global__ void k(unsigned *out, unsigned a0, unsigned one)
{
    unsigned x[8];
    for (int i = 0; i < 8; i++)
        x[i] = a0 + threadIdx.x * 8 + i;
    unsigned c = a0 * 3u;
    for (int n = 0; n < N; n++) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            if (OP == 0) x[i] = __viaddmax_s16x2(x[i], c, x[(i + 1) & 7]);
            if (OP == 1) x[i] = __vimax3_s16x2(x[i], c, x[(i + 1) & 7]);
            if (OP == 2) x[i] = __byte_perm(x[i], x[(i + 1) & 7], 0x5410);
            if (OP == 3) asm volatile("mad.lo.u32 %0, %1, %2, %0;" : "+r"(x[i]) : "r"(x[(i + 1) & 7]), "r"(one));
            if (OP == 4) x[i] = x[i] + x[(i + 1) & 7] + c;
            if (OP == 5) { /* 5 DPX : 1 PRMT */
                x[i] = (i == 7) ? __byte_perm(x[i], x[0], 0x5410) : __viaddmax_s16x2(x[i], c, x[(i + 1) & 7]);
            }
            if (OP == 6) { /* 1 DPX : 1 IMAD */
                if (i & 1) asm volatile("mad.lo.u32 %0, %1, %2, %0;" : "+r"(x[i]) : "r"(x[(i + 1) & 7]), "r"(one));
                else x[i] = __viaddmax_s16x2(x[i], c, x[(i + 1) & 7]);
            }
            if (OP == 8) asm volatile("max.f16x2 %0, %0, %1;" : "+r"(x[i]) : "r"(x[(i + 1) & 7]));
            if (OP == 9) { /* 1 DPX : 1 f16x2 max */
                if (i & 1) asm volatile("max.f16x2 %0, %0, %1;" : "+r"(x[i]) : "r"(x[(i + 1) & 7]));
                else x[i] = __viaddmax_s16x2(x[i], c, x[(i + 1) & 7]);
            }
            if (OP == 10) { /* 2 DPX : 1 f16x2 max : 1 IMAD */
                if ((i & 3) == 1) asm volatile("max.f16x2 %0, %0, %1;" : "+r"(x[i]) : "r"(x[(i + 1) & 7]));
                else if ((i & 3) == 3) asm volatile("mad.lo.u32 %0, %1, %2, %0;" : "+r"(x[i]) : "r"(x[(i + 1) & 7]), "r"(one));
                else x[i] = __viaddmax_s16x2(x[i], c, x[(i + 1) & 7]);
            }
            if (OP == 7) { /* 1 DPX : 1 PRMT */
                if (i & 1) x[i] = __byte_perm(x[i], x[(i + 1) & 7], 0x5410);
                else x[i] = __viaddmax_s16x2(x[i], c, x[(i + 1) & 7]);
            }
        }
    }
    unsigned s = 0;
    for (int i = 0; i < 8; i++)
        s ^= x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int OP>
static void run(const char *name, int sms, unsigned *d)
{
    int blocks = sms * 8, threads = 256;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    k<OP><<<blocks, threads>>>(d, 1, 1);
    cudaEventRecord(a);
    k<OP><<<blocks, threads>>>(d, 1, 1);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    int clk;
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
    double warp_instr = (double)blocks * threads / 32 * N * 8;
    double per_sm_clk = warp_instr / sms / (ms * 1e-3 * clk * 1e3);
    printf("dpx_rate %-22s %7.3f ms  %5.2f warp-instr/clk/SM (at %d MHz)\n", name, ms, per_sm_clk,
           clk / 1000);
}

int main()
{
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    unsigned *d;
    cudaMalloc(&d, p.multiProcessorCount * 8 * 256 * sizeof(unsigned));
    run<0>("VIADDMNMX", p.multiProcessorCount, d);
    run<1>("VIMNMX3", p.multiProcessorCount, d);
    run<2>("PRMT", p.multiProcessorCount, d);
    run<3>("IMAD", p.multiProcessorCount, d);
    run<4>("IADD3", p.multiProcessorCount, d);
    run<5>("7 DPX + 1 PRMT", p.multiProcessorCount, d);
    run<6>("DPX + IMAD 1:1", p.multiProcessorCount, d);
    run<7>("DPX + PRMT 1:1", p.multiProcessorCount, d);
    run<8>("HMNMX2 (max.f16x2)", p.multiProcessorCount, d);
    run<9>("DPX + HMNMX2 1:1", p.multiProcessorCount, d);
    run<10>("DPX:HMNMX2:IMAD 2:1:1", p.multiProcessorCount, d);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("dpx_rate: %s\n", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}
