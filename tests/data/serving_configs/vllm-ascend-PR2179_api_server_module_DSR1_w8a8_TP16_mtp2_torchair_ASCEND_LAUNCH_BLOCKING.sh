`
export HCCL_IF_IP=xxx  # node ip
export HCCL_BUFFSIZE=1024
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_DETERMINISTIC=True

export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
export MINDIE_LOG_TO_STDOUT="benchmark:1; client:1"

export VLLM_USE_V1=1
export VLLM_ENABLE_MC2=1
export VLLM_VERSION=0.9.2
export ASCEND_LAUNCH_BLOCKING=1
# export ASCEND_GLOBAL_LOG_LEVEL=0

LOG_FILE="./mtp_tp16/mtp_log_$(date +%Y%m%d_%H%M).log"

python -m vllm.entrypoints.openai.api_server \
 --model="/home/data/DeepSeek-R1_w8a8/" \
 --trust-remote-code \
 --max-model-len 40000 \
 --no-enable-prefix-caching \
 --tensor-parallel-size 16 \
 --data_parallel_size 1 \
 --enable_expert_parallel \
 --served-model-name deepseekr1 \
 --quantization ascend \
 --max-num-seqs 16 \
 --max-num-batched-tokens 6000 \
 --speculative-config '{"num_speculative_tokens": 2, "method":"deepseek_mtp"}' \
 --host 0.0.0.0 \
 --port 1234 \
 --additional-config '{"ascend_scheduler_config":{"enabled":true}, "torchair_graph_config":{"enabled":true,"graph_batch_sizes":[16]}}' \
 --gpu_memory_utilization 0.9 > $LOG_FILE 2>&1
`
