--#include prelude.lua
local phase = obj.status.phase
if phase == "Allocated" then
  hs.status = "Healthy"
elseif phase == "Failed" then
  hs.status = "Degraded"
else
  -- Pending (waiting for the pool) or Released (finalizing)
  hs.status = "Progressing"
end
hs.message = message(ready, tostring(phase))
return hs
