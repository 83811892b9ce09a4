import { watch, type Directive, type DirectiveBinding, type WatchStopHandle } from 'vue'
import { hasAllPermissions, hasAnyPermission } from '../../shared/permissions'
import type { AuthUser } from '../../shared/types'
import { useAuthUser } from '../lib/auth-state'

type CanValue = string | readonly string[] | undefined
type CanElement = HTMLElement & {
  _canDisplay?: string
  _canBinding?: DirectiveBinding<CanValue>
  _canStop?: WatchStopHandle
  _canDisabled?: boolean
}

/** Whether the user may use the control: all URIs, or any with `.any`. */
export function canUse(user: AuthUser | null, binding: DirectiveBinding<CanValue>): boolean {
  const uris = typeof binding.value === 'string' ? [binding.value] : [...(binding.value ?? [])]
  return binding.modifiers.any ? hasAnyPermission(user, uris) && uris.length > 0 : hasAllPermissions(user, uris)
}

function apply(el: CanElement, allowed: boolean, disable: boolean): void {
  if (disable) {
    if (!allowed) {
      el._canDisabled = true
      el.setAttribute('disabled', '')
      el.setAttribute('aria-disabled', 'true')
    }
    else if (el._canDisabled) {
      el._canDisabled = false
      el.removeAttribute('disabled')
      el.removeAttribute('aria-disabled')
    }
    return
  }
  el.style.display = allowed ? el._canDisplay ?? '' : 'none'
}

/**
 * v-can="'/orders/create'" (or an array: all needed) hides the element, like v-show, on the server render too;
 * v-can.any needs any of them; v-can.disable keeps it visible but disabled (disabled, aria-disabled="true").
 * It follows the user state, so it updates on login and logout.
 */
export default defineNuxtPlugin((nuxtApp) => {
  const user = useAuthUser()
  const update = (el: CanElement) => apply(el, canUse(user.value, el._canBinding!), !!el._canBinding!.modifiers.disable)

  const directive: Directive<CanElement, CanValue> = {
    beforeMount(el, binding) {
      // During hydration the server may already have hidden it: the original display is then ''.
      el._canDisplay = el.style.display === 'none' ? '' : el.style.display
      el._canBinding = binding
      update(el)
    },
    mounted(el) {
      el._canStop = watch(user, () => update(el))
    },
    updated(el, binding) {
      el._canBinding = binding
      update(el)
    },
    unmounted(el) {
      el._canStop?.()
    },
    getSSRProps(binding) {
      if (canUse(user.value, binding)) return {}
      return binding.modifiers.disable ? { 'disabled': true, 'aria-disabled': 'true' } : { style: { display: 'none' } }
    },
  }
  nuxtApp.vueApp.directive('can', directive)
})
