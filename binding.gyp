{
  "targets": [
    {
      "target_name": "thread_clock",
      "sources": ["native/thread_clock.c"],
      "cflags": ["-O2"]
    },
    {
      "target_name": "luna_memory",
      "sources": ["native/memory.c"],
      "cflags": ["-O2"]
    },
    {
      "target_name": "luna_fd",
      "sources": ["native/fd.c"],
      "cflags": ["-O2"]
    },
    {
      "target_name": "luna_ucode",
      "sources": ["native/luna_ucode.cc"],
      "cflags_cc": ["-O2", "-std=c++17"],
      "libraries": ["-ldl"]
    }
  ],
  "conditions": [
    ["OS=='linux'", {
      "targets": [
        {
          "target_name": "luna_shm",
          "sources": ["native/shm.c"],
          "cflags": ["-O2"]
        }
      ]
    }]
  ]
}
