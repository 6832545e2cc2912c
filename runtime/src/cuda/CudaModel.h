// A model on one GPU: the code chosen for its architecture, loaded, and
// the weights, uploaded once and shared by every session there.

#ifndef KILN_RUNTIME_CUDA_CUDAMODEL_H
#define KILN_RUNTIME_CUDA_CUDAMODEL_H

#include "runtime/src/Model.h"
#include "runtime/src/cuda/DynamicSymbols.h"

namespace kiln::cuda {

/// A model's code and weights on one GPU: its state on "cuda:N".
struct CudaModel final : DeviceModel {
  const Driver *d = nullptr;
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUdeviceptr weights = 0;
  const Plan *plan = nullptr;
  std::vector<CUfunction> functions; ///< one per launch of the plan
  std::string description, target;

  ~CudaModel() override;
};

/// The model's state on GPU `ordinal`, made by the first session there:
/// loads the model's code for the GPU's architecture (a cubin built for it,
/// else PTX for the driver to compile) and uploads the plan's weights.
kiln_status_t openModel(kiln_model_t *model, const Driver &d, int ordinal, CudaModel **out);

} // namespace kiln::cuda

#endif // KILN_RUNTIME_CUDA_CUDAMODEL_H
